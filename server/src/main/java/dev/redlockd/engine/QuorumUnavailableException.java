package dev.redlockd.engine;

/** Fewer than a quorum of nodes could take part; retrying the same call may succeed. */
public final class QuorumUnavailableException extends LockEngineException {
  public QuorumUnavailableException(String message) {
    super(message);
  }

  static QuorumUnavailableException of(String resource, Tally tally) {
    String quarantined = tally.quarantined() == 0 ? ""
        : ", " + tally.quarantined() + " of them not voting (quarantined after losing their data, or not yet "
            + "initialised)";
    return new QuorumUnavailableException("resource '" + resource + "': " + tally.answered() + " of "
        + tally.nodes() + " Redis nodes answered" + quarantined + "; quorum is " + tally.quorum());
  }
}
