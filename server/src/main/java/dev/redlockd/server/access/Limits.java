package dev.redlockd.server.access;

/**
 * One identity's share of the server: leases it holds at once, KeepAlive streams it has open,
 * Acquire calls it has waiting, Campaign and Observe streams it has open. Each is a count per
 * identity (not per pattern), so two services matched by the same wildcard each get the whole limit.
 */
public record Limits(int heldLeases, int keepAliveStreams, int waitingAcquires, int electionStreams) {
  /** When a policy says nothing: generous, but finite so no tenant can take everything. */
  public static final Limits DEFAULT = new Limits(10_000, 1_000, 1_000, 1_000);
  /** An identity no policy entry covers: it may hold and open nothing. */
  public static final Limits NONE = new Limits(0, 0, 0, 0);

  public Limits {
    if (heldLeases < 0 || keepAliveStreams < 0 || waitingAcquires < 0 || electionStreams < 0) {
      throw new IllegalArgumentException("limits are counts: none may be negative");
    }
  }
}
