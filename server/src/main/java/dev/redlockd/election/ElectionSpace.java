package dev.redlockd.election;

import dev.redlockd.engine.Grant;
import dev.redlockd.engine.KeptLease;
import dev.redlockd.engine.Leases;
import dev.redlockd.engine.LockDescription;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What elections use of the engine's election space: {@link Leases} in the server
 * ({@link LeasesSpace}), a fake in the tests that drive a candidacy or a watch answer by answer.
 * Each method is the {@link Leases} method of the same name.
 */
interface ElectionSpace {
  CompletableFuture<Grant> acquire(String election, Duration ttl, Duration wait, String token, String value);

  /** Held, not held ({@code LeaseNotHeldException}), or not known ({@code QuorumUnavailableException}). */
  CompletableFuture<Grant> refresh(String election, String token, Duration ttl, String value);

  CompletableFuture<Boolean> release(String election, String token);

  Kept keep(String election, String token, Duration ttl, KeptLease.Listener listener);

  CompletableFuture<LockDescription> describe(String election);

  void announceChange(String election, String payload);

  AutoCloseable listenForChanges(String election, Leases.ChangeListener listener);

  /** The part of a {@link KeptLease} a candidacy drives. */
  interface Kept {
    void renewNow(Duration newTtl, long mark);

    /** A renewal sent without waiting for others to join it: a new leader's first, which announces it. */
    void renewNowAtOnce(long mark);

    void stop();

    CompletableFuture<Boolean> release();
  }
}
