package dev.redlockd.server.access;

/**
 * One identity's share of the server: leases it holds at once, KeepAlive streams it has open,
 * Acquire calls it has waiting. Each is a count per identity (not per pattern), so two services
 * matched by the same wildcard each get the whole limit.
 */
public record Limits(int heldLeases, int keepAliveStreams, int waitingAcquires) {
  /** When a policy says nothing: generous, but finite so no tenant can take everything. */
  public static final Limits DEFAULT = new Limits(10_000, 1_000, 1_000);

  public Limits {
    if (heldLeases < 0 || keepAliveStreams < 0 || waitingAcquires < 0) {
      throw new IllegalArgumentException("limits are counts: none may be negative");
    }
  }
}
