package dev.redlockd.election;

import dev.redlockd.engine.Grant;
import dev.redlockd.engine.KeptLease;
import dev.redlockd.engine.Leases;
import dev.redlockd.engine.LockDescription;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** The engine's election space, as elections use it. */
final class LeasesSpace implements ElectionSpace {
  private final Leases leases;

  LeasesSpace(Leases leases) {
    this.leases = leases;
  }

  @Override
  public CompletableFuture<Grant> acquire(String election, Duration ttl, Duration wait, String token, String value) {
    return leases.acquire(election, ttl, wait, token, value);
  }

  @Override
  public CompletableFuture<Grant> refresh(String election, String token, Duration ttl, String value) {
    return leases.refresh(election, token, ttl, value);
  }

  @Override
  public CompletableFuture<Boolean> release(String election, String token) {
    return leases.release(election, token);
  }

  @Override
  public Kept keep(String election, String token, Duration ttl, KeptLease.Listener listener) {
    KeptLease lease = leases.keep(election, token, ttl, listener);
    return new Kept() {
      @Override
      public void renewNow(Duration newTtl, long mark) {
        lease.renewNow(newTtl, mark);
      }

      @Override
      public void renewNowAtOnce(long mark) {
        lease.renewNow(null, mark, true);
      }

      @Override
      public void stop() {
        lease.stop();
      }

      @Override
      public CompletableFuture<Boolean> release() {
        return lease.release();
      }
    };
  }

  @Override
  public CompletableFuture<LockDescription> describe(String election) {
    return leases.describe(election);
  }

  @Override
  public void announceChange(String election, String payload) {
    leases.announceChange(election, payload);
  }

  @Override
  public AutoCloseable listenForChanges(String election, Leases.ChangeListener listener) {
    return leases.listenForChanges(election, listener);
  }
}
