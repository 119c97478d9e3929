package dev.redlockd.engine;

/** The lock is held by someone else and was not acquired within the wait. */
public class LockHeldException extends LockEngineException {
  /** Nodes that did not answer, with the yes votes, could still make a quorum. */
  private final boolean silentCouldMakeAQuorum;

  public LockHeldException(String resource, int yes, int voters) {
    this(resource, yes, voters, false);
  }

  LockHeldException(String resource, int yes, int voters, boolean silentCouldMakeAQuorum) {
    super("resource '" + resource + "' is held by another owner (" + yes + " of " + voters
        + " voting nodes granted it)");
    this.silentCouldMakeAQuorum = silentCouldMakeAQuorum;
  }

  /** With a message of the subclass's (a semaphore's permits), which names no token. */
  LockHeldException(String message, boolean silentCouldMakeAQuorum) {
    super(message);
    this.silentCouldMakeAQuorum = silentCouldMakeAQuorum;
  }

  /**
   * Whether the round left it open that the caller's own lease still has a quorum: the nodes
   * that did not answer, with those that said yes, could make one. A refresh of a held lease
   * that ends here has not found the lease gone.
   */
  boolean silentCouldMakeAQuorum() {
    return silentCouldMakeAQuorum;
  }
}
