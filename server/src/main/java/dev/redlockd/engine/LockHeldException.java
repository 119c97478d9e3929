package dev.redlockd.engine;

/** The lock is held by someone else and was not acquired within the wait. */
public final class LockHeldException extends LockEngineException {
  public LockHeldException(String resource, int yes, int voters) {
    super("resource '" + resource + "' is held by another owner (" + yes + " of " + voters
        + " voting nodes granted it)");
  }
}
