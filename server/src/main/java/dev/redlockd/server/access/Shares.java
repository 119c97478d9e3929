package dev.redlockd.server.access;

import dev.redlockd.engine.Grant;

/**
 * Each identity's share of this server under the policy's limits: leases held, KeepAlive streams
 * open, Acquire calls waiting, Campaign and Observe streams open. Past its limit a caller gets
 * RESOURCE_EXHAUSTED while other identities are still served. A server without a policy (no caller) counts nothing here: the
 * server-wide limits alone apply.
 */
public final class Shares {
  private static final Quotas.Slot NOTHING = () -> { };

  private final Access access;
  private final HeldLeases leases = new HeldLeases(System::nanoTime);
  private final Quotas streams = new Quotas("KeepAlive streams");
  private final Quotas waiting = new Quotas("waiting Acquire calls");
  private final Quotas electionStreams = new Quotas("Campaign and Observe streams");

  public Shares(Access access) {
    this.access = access;
  }

  public Quotas.Slot waitingAcquire(Caller caller) throws Quotas.Exhausted {
    return caller == null ? NOTHING : waiting.take(caller.identity(), limits(caller).waitingAcquires());
  }

  public Quotas.Slot keepAliveStream(Caller caller) throws Quotas.Exhausted {
    return caller == null ? NOTHING : streams.take(caller.identity(), limits(caller).keepAliveStreams());
  }

  /** A Campaign or an Observe stream: both hold a --max-streams slot while open. */
  public Quotas.Slot electionStream(Caller caller) throws Quotas.Exhausted {
    return caller == null ? NOTHING : electionStreams.take(caller.identity(), limits(caller).electionStreams());
  }

  public Quotas.Slot reserveLease(Caller caller, String resource, String token) throws Quotas.Exhausted {
    return caller == null ? NOTHING : leases.reserve(caller.identity(), resource, token, limits(caller).heldLeases());
  }

  public void granted(Caller caller, Grant lease, Quotas.Slot reserved) {
    if (caller != null) {
      leases.granted(caller.identity(), lease, reserved);
    }
  }

  public void renewed(Caller caller, Grant lease) {
    if (caller != null) {
      leases.renewed(caller.identity(), lease);
    }
  }

  public void released(Caller caller, String resource, String token) {
    if (caller != null) {
      leases.released(caller.identity(), resource, token);
    }
  }

  /** Limits under the rules in force now: a reload that lowers one applies to the next call. */
  private Limits limits(Caller caller) {
    return access.limitsFor(caller.identity());
  }
}
