package dev.redlockd.server;

import dev.redlockd.engine.Grant;
import dev.redlockd.server.auth.Permission;
import io.grpc.Status;

/**
 * What a KeepAlive stream reports about its lease to the access policy and its caller's share:
 * whether each renewal is still granted, and when the lease is renewed or released.
 */
final class KeptLeaseAccount {
  private final Access access;
  private final Shares shares;
  private final Caller caller; // null without a policy

  KeptLeaseAccount(Access access, Shares shares, Caller caller) {
    this.access = access;
    this.shares = shares;
    this.caller = caller;
  }

  /** The refusal of a renewal under the rules in force now, or null when it is allowed. */
  Status renewalRefusal(String resource) {
    return access.check(caller, "KeepAlive", Permission.LOCK, resource);
  }

  void renewed(Grant lease) {
    shares.renewed(caller, lease);
  }

  void released(Grant lease) {
    shares.released(caller, lease.resource(), lease.token());
  }
}
