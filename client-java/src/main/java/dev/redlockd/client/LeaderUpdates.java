package dev.redlockd.client;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An election's leader as a stream that its reader pulls: {@link #next()} returns the leader
 * (or empty) now, then each change, blocking until it comes.
 *
 * <pre>{@code
 * try (LeaderUpdates updates = client.observe("scheduler")) {
 *   Optional<Leader> now = updates.next();            // the leader now, or empty
 *   Optional<Leader> changed = updates.next(Duration.ofSeconds(5)); // or TimeoutException
 * }
 * }</pre>
 *
 * It keeps every change it has not read yet, in order (each once, in term order, across
 * reopened streams: the same rules as {@link Observation}'s callbacks, whose watching machinery
 * this shares). {@link #close()} stops the watch from any thread: a reader blocked in
 * {@code next} then gets a {@link CancellationException}, and changes not yet read are dropped.
 */
public final class LeaderUpdates implements AutoCloseable {
  private final String election;
  private final Observation watch;
  private final ArrayDeque<Optional<Leader>> unread = new ArrayDeque<>(); // guarded by this
  private boolean closed; // guarded by this

  LeaderUpdates(LockClient client, dev.redlockd.proto.v1.ElectionServiceGrpc.ElectionServiceStub stub,
      String election) {
    this.election = election;
    this.watch = new Observation(client, stub, election, this::arrived);
  }

  void open() {
    watch.open();
  }

  /** Called by the watch, one state at a time, each a change. */
  private synchronized void arrived(Optional<Leader> state) {
    if (!closed) {
      unread.add(state);
      notifyAll();
    }
  }

  /**
   * The next state: the leader (or empty) now on the first call, then each change; blocks
   * until there is one.
   *
   * @throws CancellationException once closed (also to a reader blocked here when it closes)
   */
  public synchronized Optional<Leader> next() throws InterruptedException {
    while (unread.isEmpty() && !closed) {
      wait();
    }
    return take();
  }

  /**
   * {@link #next()}, waiting at most {@code timeout}.
   *
   * @throws TimeoutException when nothing changed within it
   * @throws CancellationException once closed
   */
  public synchronized Optional<Leader> next(Duration timeout) throws InterruptedException, TimeoutException {
    Objects.requireNonNull(timeout, "timeout");
    long until = System.nanoTime() + timeout.toNanos();
    while (unread.isEmpty() && !closed) {
      long left = until - System.nanoTime();
      if (left <= 0) {
        throw new TimeoutException("no change of election '" + election + "' within " + timeout.toMillis() + " ms");
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return take();
  }

  private Optional<Leader> take() {
    if (closed) {
      throw new CancellationException("the updates of election '" + election + "' were closed");
    }
    return unread.poll();
  }

  /** Stops watching; idempotent. A reader blocked in {@code next} wakes with a CancellationException. */
  @Override
  public void close() {
    watch.close(); // first, and outside this object's lock: the watch delivers under its own lock
    synchronized (this) {
      closed = true;
      unread.clear();
      notifyAll();
    }
  }

  @Override
  public String toString() {
    return "LeaderUpdates[election=" + election + "]";
  }
}
