package dev.redlockd.engine;

/** A configured limit of this server (waiting Acquire calls) is reached. */
public final class LimitExceededException extends LockEngineException {
  public LimitExceededException(String message) {
    super(message);
  }
}
