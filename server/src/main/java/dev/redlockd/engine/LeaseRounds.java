package dev.redlockd.engine;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * What one Acquire call tries, round after round ({@link AcquireOperation} decides when): the
 * lock of a resource, or a permit of a semaphore, where each round may try another permit.
 */
interface LeaseRounds {
  /** The name waiters wait on: a release announced for it wakes them. */
  String resource();

  /**
   * One round; {@code answered} (when not null) is told the names of the nodes whose answers had
   * come when the round was decided.
   */
  CompletableFuture<Grant> next(Consumer<List<String>> answered);

  /** A lease granted for a call no one listens to any more (with a token the engine made). */
  void giveBack(Grant lease, Redlock redlock);

  /**
   * After a refused round: whether the next one should go at once rather than after the retry
   * delay, because the refusal showed where to go (another permit free on enough nodes).
   */
  boolean retryAtOnce(Throwable refusal);

  /** A lock's rounds: the same lock every time. */
  static LeaseRounds lock(Redlock redlock, String resource, String token, String owner, java.time.Duration ttl) {
    return new LeaseRounds() {
      @Override
      public String resource() {
        return resource;
      }

      @Override
      public CompletableFuture<Grant> next(Consumer<List<String>> answered) {
        return redlock.acquire(resource, token, owner, ttl, answered);
      }

      @Override
      public void giveBack(Grant lease, Redlock unused) {
        redlock.release(resource, token, redlock.newNotice());
      }

      @Override
      public boolean retryAtOnce(Throwable refusal) {
        return false;
      }
    };
  }
}
