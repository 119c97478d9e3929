package dev.redlockd.engine;

/** The request breaks a rule of the contract; nothing was changed. */
public final class InvalidRequestException extends LockEngineException {
  public InvalidRequestException(String message) {
    super(message);
  }
}
