package dev.redlockd.sim;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A semaphore as the semaphore workload drives it: the real engine's permits, or a mutant.
 * Failures are the engine's exception kinds (LockHeldException, QuorumUnavailableException,
 * LeaseNotHeldException, LimitExceededException), so one checker judges both.
 */
interface SimSemaphore {
  CompletableFuture<PermitGrant> acquire(String resource, int permits, Duration ttl, Duration wait, String token);

  CompletableFuture<PermitGrant> extend(String resource, int permit, String token, Duration ttl);

  CompletableFuture<Boolean> release(String resource, int permit, String token);

  /** A kept-alive permit: renewed when the holder asks, each answer told with the holder's mark. */
  Kept keep(String resource, int permit, String token, Duration ttl, KeptListener listener);

  interface Kept {
    void renewNow(long mark);

    CompletableFuture<Boolean> release();
  }

  interface KeptListener {
    void held(PermitGrant grant, long mark);

    void lost(Throwable cause);
  }

  /** The tokens one node counts as holders of the semaphore now (read from its keyspace, for the checker). */
  Set<String> holdersOn(SimHost host, String resource);

  /** Whether the node's holders count towards a quorum. */
  default boolean votes(SimHost host) {
    return true;
  }
}
