package dev.redlockd.server.access;

import dev.redlockd.engine.Grant;
import io.grpc.Status;

/**
 * What a KeepAlive stream reports about its lease to the access policy and its caller's share:
 * whether each renewal is still granted, and when the lease is renewed or released.
 */
public final class KeptLeaseAccount {
  private final Access access;
  private final Shares shares;
  private final Caller caller; // null without a policy

  public KeptLeaseAccount(Access access, Shares shares, Caller caller) {
    this.access = access;
    this.shares = shares;
    this.caller = caller;
  }

  /** The refusal of a renewal under the rules in force now, or null when it is allowed. */
  public Status renewalRefusal(String resource) {
    return access.check(caller, "KeepAlive", Permission.LOCK, resource);
  }

  public void renewed(Grant lease) {
    shares.renewed(caller, lease);
  }

  public void released(Grant lease) {
    shares.released(caller, lease.resource(), lease.token());
  }
}
