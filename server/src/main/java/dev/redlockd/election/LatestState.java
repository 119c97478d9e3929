package dev.redlockd.election;

import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one observer of a {@link LeaderWatch} is still to be told: the latest state only. An
 * observer that is told slower than the election changes gets where the election is now, not
 * every state in between. Its pending state is guarded by the watch's lock; the observer itself
 * is called outside it.
 */
final class LatestState {
  private static final Logger log = LoggerFactory.getLogger(LatestState.class);

  private final Consumer<Optional<Leader>> observer;
  private Optional<Leader> pending;
  /** Set under the watch's lock, read by a delivery under way too. */
  private volatile boolean closed;

  LatestState(Consumer<Optional<Leader>> observer) {
    this.observer = observer;
  }

  /** Replaces what is pending; true when nothing was, so the observer must be queued for delivery. */
  boolean post(Optional<Leader> state) {
    if (closed) {
      return false;
    }
    boolean wasIdle = pending == null;
    pending = state;
    return wasIdle;
  }

  /** What is pending, now taken for delivery (null if nothing is). */
  Optional<Leader> take() {
    Optional<Leader> state = pending;
    pending = null;
    return state;
  }

  /** Nothing more is told, not even what is pending. */
  void close() {
    closed = true;
    pending = null;
  }

  /** Called outside the watch's lock, on the delivery executor. */
  void tell(Optional<Leader> state) {
    if (closed) {
      return;
    }
    try {
      observer.accept(state);
    } catch (RuntimeException e) {
      log.warn("an observer of an election failed", e);
    }
  }
}
