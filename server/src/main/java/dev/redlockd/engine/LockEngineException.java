package dev.redlockd.engine;

/** Base of the engine's typed failures; messages name the resource and numbers, never a token. */
public abstract class LockEngineException extends RuntimeException {
  protected LockEngineException(String message) {
    // No stack trace: these are outcomes, not bugs, and some are frequent under contention.
    super(message, null, false, false);
  }
}
