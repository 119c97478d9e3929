package dev.redlockd.engine;

/**
 * An Acquire ended because its caller's own deadline passed, not the wait it asked for. The
 * caller is no longer listening: what it sees is its deadline running out, whatever the last
 * round said, so the answer must not claim the lock was found held (ABORTED) first.
 */
public final class CallerDeadlineException extends LockEngineException {
  public CallerDeadlineException(String message) {
    super(message);
  }
}
