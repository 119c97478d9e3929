package dev.redlockd.engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A kept lease's listener for tests of when renewals are answered: completes with the time
 * (System.nanoTime) of the first renewal that held, fails on a JEOPARDY or a loss, and counts
 * the renewals that reached no answer and are retried quietly.
 */
final class FirstRenewal implements KeptLease.Listener {
  final CompletableFuture<Long> heldAt = new CompletableFuture<>();
  final AtomicInteger unconfirmed = new AtomicInteger();

  @Override
  public void held(Grant lease, long mark) {
    heldAt.complete(System.nanoTime());
  }

  @Override
  public void jeopardy(Grant lease, LockEngineException cause, long mark) {
    heldAt.completeExceptionally(cause);
  }

  @Override
  public void lost(LockEngineException cause) {
    heldAt.completeExceptionally(cause);
  }

  @Override
  public void unconfirmed(LockEngineException cause, long mark) {
    unconfirmed.incrementAndGet();
  }
}
