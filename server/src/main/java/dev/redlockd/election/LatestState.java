package dev.redlockd.election;

import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One observer's deliveries: the observer is called on the delivery executor, one call at a
 * time and in order, never on the thread that posts (pub/sub, a read's completion, the
 * thread that opened the observation) nor under the watch's lock. An observer that takes the
 * states slower than they come gets the latest, not every one in between: it is told where the
 * election is now, and one slow observer holds up nobody else.
 */
final class LatestState {
  private static final Logger log = LoggerFactory.getLogger(LatestState.class);

  private final Consumer<Optional<Leader>> observer;
  private final Executor delivery;

  // All guarded by this.
  private Optional<Leader> pending;
  private boolean draining;
  private boolean closed;

  LatestState(Consumer<Optional<Leader>> observer, Executor delivery) {
    this.observer = observer;
    this.delivery = delivery;
  }

  /** The observer will be told {@code state}, unless a later one comes first. */
  void post(Optional<Leader> state) {
    synchronized (this) {
      if (closed) {
        return;
      }
      pending = state;
      if (draining) {
        return;
      }
      draining = true;
    }
    try {
      delivery.execute(this::drain);
    } catch (RejectedExecutionException e) {
      synchronized (this) {
        draining = false; // the server is stopping: nothing more is told
      }
    }
  }

  /** Nothing more is told, not even what is pending. */
  synchronized void close() {
    closed = true;
    pending = null;
  }

  private void drain() {
    while (true) {
      Optional<Leader> next;
      synchronized (this) {
        next = pending;
        pending = null;
        if (next == null || closed) {
          draining = false;
          return;
        }
      }
      try {
        observer.accept(next);
      } catch (RuntimeException e) {
        log.warn("an observer of an election failed", e);
      }
    }
  }
}
