package dev.redlockd.server.access;

import dev.redlockd.engine.AcquireObserver;
import dev.redlockd.engine.Grant;
import dev.redlockd.engine.LeaseRequest;
import dev.redlockd.engine.LockEngine;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The lock service's lease calls on a caller's behalf, kept in step with the caller's
 * {@link Shares}: an Acquire holds a waiting slot while it waits and a lease slot from its start
 * (returned if it fails), a renewal and a release update the count, and a grant that can no longer
 * reach its caller is given back. The gRPC adapter only maps messages and statuses onto these.
 */
public final class LeaseDesk {
  private final LockEngine engine;
  private final Shares shares;

  public LeaseDesk(LockEngine engine, Shares shares) {
    this.engine = engine;
    this.shares = shares;
  }

  /**
   * The Acquire {@code request} describes, for {@code caller} (null without an access policy),
   * whose identity it records as the holder. Refused before anything is sent when the caller's
   * share of waiting calls or held leases is used up.
   */
  public CompletableFuture<Grant> acquire(Caller caller, LeaseRequest.Builder request, AcquireObserver observer)
      throws Quotas.Exhausted {
    LeaseRequest asked = request.holder(caller == null ? "" : caller.identity()).build();
    Quotas.Slot waiting = asked.waitUpTo().isZero() ? null : shares.waitingAcquire(caller);
    Quotas.Slot holding;
    try {
      holding = shares.reserveLease(caller, asked.resource(), asked.token());
    } catch (Quotas.Exhausted e) {
      close(waiting);
      throw e;
    }
    CompletableFuture<Grant> lease;
    try {
      lease = engine.acquire(asked, observer);
    } catch (RuntimeException e) {
      holding.close();
      close(waiting);
      throw e;
    }
    lease.whenComplete((granted, failure) -> {
      close(waiting);
      if (failure == null) {
        shares.granted(caller, granted, holding);
      } else {
        holding.close();
      }
    });
    return lease;
  }

  /**
   * A grant whose caller left before it arrived. With a token the server made ({@code askedToken}
   * empty) no one else can release it, so it is given back; with the caller's own token the
   * caller may be retrying with it, and it stays.
   */
  public void undeliverable(Caller caller, Grant grant, String askedToken) {
    if (askedToken.isEmpty()) {
      engine.release(grant.resource(), grant.permit(), grant.token());
      shares.released(caller, grant.resource(), grant.token());
    }
  }

  /** Extends the lock (permit 0) or the permit that {@code token} holds. */
  public CompletableFuture<Grant> extend(Caller caller, String resource, int permit, String token, Duration ttl) {
    CompletableFuture<Grant> lease = engine.extend(resource, permit, token, ttl);
    lease.thenAccept(extended -> shares.renewed(caller, extended));
    return lease;
  }

  /** Releases the lock (permit 0) or the permit that {@code token} holds. */
  public CompletableFuture<Boolean> release(Caller caller, String resource, int permit, String token) {
    CompletableFuture<Boolean> outcome = engine.release(resource, permit, token);
    outcome.thenAccept(r -> shares.released(caller, resource, token));
    return outcome;
  }

  /** A KeepAlive stream's slot in the caller's share of open streams. */
  public Quotas.Slot keepAliveStream(Caller caller) throws Quotas.Exhausted {
    return shares.keepAliveStream(caller);
  }

  /** What a KeepAlive stream of {@code caller} may keep, checked again at each renewal it makes. */
  public KeptLeaseAccount keptLeases(Access access, Caller caller) {
    return new KeptLeaseAccount(access, shares, caller);
  }

  private static void close(Quotas.Slot slot) {
    if (slot != null) {
      slot.close();
    }
  }
}
