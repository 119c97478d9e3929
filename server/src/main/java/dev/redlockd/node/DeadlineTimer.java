package dev.redlockd.node;

import io.netty.channel.EventLoop;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The node timeout of one connection's calls: one timer for the connection, not one per call,
 * on its event loop (every method runs there). A call past its deadline fails with a
 * {@link TimeoutException} after one more pass of the loop over its sockets, so that a reply that
 * came while the loop was busy is not taken for silence. A connection whose oldest call is
 * {@link #STUCK_NANOS} past its deadline is stuck, not busy: it is dropped.
 */
final class DeadlineTimer {
  /** A node silent this long past a deadline is frozen or gone, not busy. */
  static final long STUCK_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** The timer wakes at most this often: at 10,000 calls a second, not once per call. */
  private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final EventLoop loop;
  private final String nodeName;
  private final long timeoutNanos;
  /** The oldest call written and unanswered, or null. */
  private final Supplier<NodeCall> oldest;
  /** Drops the connection (and fails its calls). */
  private final Consumer<TimeoutException> drop;
  /** The calls in deadline order; answered ones leave when the timer next runs. */
  private final ArrayDeque<NodeCall> watched = new ArrayDeque<>();
  private ScheduledFuture<?> timer;
  private long timerAt; // when the timer runs, on System.nanoTime()
  /** The timer found a call past its deadline and gave the loop one pass to read its reply. */
  private boolean readSinceDue;
  private TimeoutException timedOut; // made at the first timeout, see timeout()

  DeadlineTimer(EventLoop loop, String nodeName, long timeoutNanos, Supplier<NodeCall> oldest,
      Consumer<TimeoutException> drop) {
    this.loop = loop;
    this.nodeName = nodeName;
    this.timeoutNanos = timeoutNanos;
    this.oldest = oldest;
    this.drop = drop;
  }

  /** Watches a new call: its deadline is the latest yet. */
  void watch(NodeCall call) {
    watched.add(call);
  }

  /** Forgets every call and stops the timer (the connection was dropped and failed them). */
  void clear() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
    readSinceDue = false;
    watched.clear();
  }

  /** A retried call now sits behind younger ones, where the oldest-call timer would see it late. */
  void expireAlone(NodeCall call) {
    long left = call.deadline - System.nanoTime();
    loop.schedule(() -> call.fail(timeout()), Math.max(0, left), TimeUnit.NANOSECONDS);
  }

  /**
   * Runs the timer at the first deadline still watched, or at the stuck bound of the oldest
   * call. Usually already set early enough (deadlines come in order); not when it waits for
   * the stuck bound and a new call comes.
   */
  void arm() {
    NodeCall first = oldest.get();
    NodeCall next = watched.peek();
    if (first == null && next == null) {
      return;
    }
    long now = System.nanoTime();
    // A call held for this pass's batch is watched before it is written.
    long at = first != null ? first.deadline + STUCK_NANOS : next.deadline;
    if (next != null && next.deadline - at < 0) {
      at = next.deadline;
    }
    at = Math.max(at, now + TICK_NANOS);
    if (timer != null) {
      if (timerAt - at <= TICK_NANOS) {
        return;
      }
      timer.cancel(false);
    }
    timerAt = at;
    timer = loop.schedule(this::check, at - now, TimeUnit.NANOSECONDS);
  }

  private void check() {
    timer = null;
    long now = System.nanoTime();
    NodeCall call;
    while ((call = watched.peek()) != null && call.result.isDone()) {
      watched.poll();
    }
    if (call != null && call.deadline - now <= 0 && !readSinceDue) {
      // This loop may have been busy (or off the CPU) while the replies came in: they wait
      // unread in the socket until its next pass over the ready channels. One more pass first.
      readSinceDue = true;
      timerAt = now + TICK_NANOS;
      timer = loop.schedule(this::check, TICK_NANOS, TimeUnit.NANOSECONDS);
      return;
    }
    readSinceDue = false;
    while ((call = watched.peek()) != null && (call.result.isDone() || call.deadline - now <= 0)) {
      watched.poll();
      if (!call.result.isDone()) {
        call.result.completeExceptionally(timeout());
      }
    }
    NodeCall first = oldest.get();
    if (first != null && now - first.deadline > STUCK_NANOS) {
      drop.accept(new TimeoutException("Redis node " + nodeName + " has not answered for "
          + TimeUnit.NANOSECONDS.toMillis(now - first.deadline + timeoutNanos) + "ms"));
    } else {
      arm();
    }
  }

  /**
   * One per connection, without a stack trace: under overload every call on a node times out,
   * and a fresh exception with its stack per call was a sixth of what the server allocated in
   * a restart storm (docs/keepalive.md); where it was thrown says nothing the message does not.
   */
  private TimeoutException timeout() {
    if (timedOut == null) {
      timedOut = new NodeTimeoutException("Redis node " + nodeName + " did not answer within "
          + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + "ms");
    }
    return timedOut;
  }

  /** A node call's timeout, the same instance for every call on a connection: no stack trace, no suppressed ones. */
  private static final class NodeTimeoutException extends TimeoutException {
    NodeTimeoutException(String message) {
      super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
