package dev.redlockd.engine;

/** The lease named by resource and token is not held: expired, released or taken over. */
public final class LeaseNotHeldException extends LockEngineException {
  public LeaseNotHeldException(String resource, int holding, int quorum) {
    super("lease on resource '" + resource + "' is not held (" + holding
        + " nodes hold it, quorum is " + quorum + ")");
  }

  /** With a message of the caller's, which names what was lost (never a token). */
  public LeaseNotHeldException(String message) {
    super(message);
  }
}
