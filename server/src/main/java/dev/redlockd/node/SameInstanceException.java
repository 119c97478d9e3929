package dev.redlockd.node;

/**
 * Two node entries reach one Redis instance (the same {@code run_id}): one instance must not
 * vote twice, so the entry that reached it second serves nothing while this lasts. The message
 * names both entries (never a password).
 */
public final class SameInstanceException extends RuntimeException {
  private final NodeAddress refused;

  SameInstanceException(NodeAddress refused, NodeAddress owner, String runId) {
    super("Redis nodes " + owner + " and " + refused + " reach one Redis instance (run_id " + runId + ")", null,
        false, false);
    this.refused = refused;
  }

  /** The entry that reached the instance second, and serves nothing while it does. */
  public NodeAddress refused() {
    return refused;
  }
}
