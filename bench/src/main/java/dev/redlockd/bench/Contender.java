package dev.redlockd.bench;

import java.util.concurrent.CompletableFuture;

/**
 * One system under comparison, reduced to the one thing LockCycleBench asks of it: take a
 * free lock and give it back.
 */
interface Contender extends AutoCloseable {
  /** Short name, used in the tables. */
  String name();

  /** One line on how a cycle is done, printed under the tables so the rows can be judged. */
  String how();

  /**
   * Acquires the lock on {@code resource} (free: nobody else uses that name while the cycle
   * runs) and releases it. Completes when the release has been answered; completes
   * exceptionally if either step failed or did not hold the lock.
   */
  CompletableFuture<Void> cycle(String resource);

  /**
   * True when {@link #cycle} does its work on the calling thread: the driver then gives each
   * cycle in flight its own thread instead of chaining callbacks.
   */
  default boolean blocking() {
    return false;
  }

  @Override
  void close();
}
