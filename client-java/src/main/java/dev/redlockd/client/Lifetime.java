package dev.redlockd.client;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * How long something granted by the server (a lease, a leadership) may be relied on: its local
 * deadline on a monotonic clock, the guard before it, and the loss, reported once.
 *
 * <p>It counts as valid until a guard before the deadline (ttl/20, at most 100 ms), and is
 * reported lost then: a timer that runs a little late still tells the holder before the
 * deadline itself has passed, which is the moment someone else may be granted it.
 *
 * <p>Its lock is never held while calling out (the holder's stop action and the callbacks run
 * after it is released), so a {@link RenewalStream} may move the deadline under its own lock.
 */
final class Lifetime {
  private static final Duration MAX_GUARD = Duration.ofMillis(100);

  private final LockClient client;
  /** Names it in messages, e.g. "lease on resource 'orders/42'". */
  private final String what;
  /** What the holder does on a loss, before the callbacks: stop renewing, give it back. */
  private final Consumer<Status> stop;
  private final List<Consumer<LeaseLostException>> lostListeners = new CopyOnWriteArrayList<>();
  private volatile long guardNanos;
  private volatile long deadlineNanos;
  private volatile boolean ended;
  private volatile LeaseLostException lost;
  private ScheduledFuture<?> expiryCheck; // guarded by this

  Lifetime(LockClient client, String what, Duration ttl, long deadlineNanos, Consumer<Status> stop) {
    this.client = client;
    this.what = what;
    this.stop = stop;
    this.guardNanos = guard(ttl).toNanos();
    this.deadlineNanos = deadlineNanos;
    scheduleExpiryCheck();
  }

  /** How long before its deadline a grant stops counting as valid: ttl/20, at most 100 ms. */
  static Duration guard(Duration ttl) {
    Duration twentieth = ttl.dividedBy(20);
    return twentieth.compareTo(MAX_GUARD) < 0 ? twentieth : MAX_GUARD;
  }

  boolean isValid() {
    return !ended && lost == null && client.nanoTime() < deadlineNanos - guardNanos;
  }

  /** Neither ended by its holder nor lost (it may still have run out a moment ago). */
  boolean isOpen() {
    return !ended && lost == null;
  }

  /** Ended by its holder (released, resigned, abandoned). */
  boolean isEnded() {
    return ended;
  }

  /** Lost; once {@link #end()} has returned, this no longer changes. */
  boolean isLost() {
    return lost != null;
  }

  /** What the loss callbacks were given, or null while not lost. */
  LeaseLostException loss() {
    return lost;
  }

  Duration remaining() {
    long left = deadlineNanos - guardNanos - client.nanoTime();
    return isValid() && left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
  }

  long deadlineNanos() {
    return deadlineNanos;
  }

  /** A renewal moved the deadline (forward, as the caller made sure). */
  synchronized void renewed(long newDeadlineNanos) {
    deadlineNanos = newDeadlineNanos;
    scheduleExpiryCheck();
  }

  /** The deadline may be no later than this from now on (a ttl made shorter); never moves it forward. */
  synchronized void cut(long latestDeadlineNanos) {
    if (latestDeadlineNanos < deadlineNanos) {
      deadlineNanos = latestDeadlineNanos;
      scheduleExpiryCheck();
    }
  }

  /** The ttl changed: the guard follows it. */
  synchronized void ttlChanged(Duration ttl) {
    guardNanos = guard(ttl).toNanos();
    scheduleExpiryCheck();
  }

  /** The holder gives it up; true only the first time (and then no loss is reported any more). */
  synchronized boolean end() {
    if (ended) {
      return false;
    }
    ended = true;
    cancelExpiryCheck();
    return true;
  }

  /**
   * Reports the loss, unless it was ended or already lost: the holder's stop action runs
   * first, then every callback, once.
   */
  void lose(Status status) {
    LeaseLostException e;
    synchronized (this) {
      if (ended || lost != null) {
        return;
      }
      lost = e = new LeaseLostException(status);
      cancelExpiryCheck();
    }
    stop.accept(status);
    for (Consumer<LeaseLostException> listener : lostListeners) {
      if (lostListeners.remove(listener)) {
        listener.accept(e);
      }
    }
  }

  /** Called once, from a client thread, on the loss (at once if it already happened). */
  void onLost(Consumer<LeaseLostException> callback) {
    lostListeners.add(callback);
    LeaseLostException already = lost;
    if (already != null && lostListeners.remove(callback)) {
      callback.accept(already);
    }
  }

  private void cancelExpiryCheck() {
    if (expiryCheck != null) {
      expiryCheck.cancel(false);
    }
  }

  private synchronized void scheduleExpiryCheck() {
    if (ended || lost != null) {
      return;
    }
    cancelExpiryCheck();
    long delay = deadlineNanos - guardNanos - client.nanoTime();
    expiryCheck = client.scheduler().schedule(this::checkExpiry, Math.max(0, delay), TimeUnit.NANOSECONDS);
  }

  private void checkExpiry() {
    if (client.nanoTime() >= deadlineNanos - guardNanos) {
      lose(Status.DEADLINE_EXCEEDED.withDescription(what + " ran out: its local deadline came within "
          + TimeUnit.NANOSECONDS.toMillis(guardNanos) + " ms without a renewal"));
    }
  }
}
