package dev.redlockd.engine;

import java.util.List;

/**
 * Watches one Acquire call's rounds from outside the engine (the server's traces): told after
 * each round, on the engine's threads, so it must not block. The engine only reports; it knows
 * nothing of what the observer does, and an Acquire without one reports nothing.
 */
public interface AcquireObserver {
  /** Watches nothing. */
  AcquireObserver NONE = new AcquireObserver() { };

  /**
   * Round {@code round} (1, 2, ...) of the call ended, {@code granted} or not; {@code answered}
   * names the nodes whose answers had come when the round was decided (a granted round is decided
   * as soon as a quorum said yes, so a slower node may be missing), out of {@code nodes}.
   */
  default void roundEnded(int round, List<String> answered, int nodes, boolean granted) {}
}
