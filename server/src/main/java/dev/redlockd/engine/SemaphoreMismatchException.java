package dev.redlockd.engine;

/**
 * A voting node guards the semaphore with another N than this caller asked for: callers that
 * disagree on N are refused rather than given a larger bound. Nothing this round wrote stays.
 */
public final class SemaphoreMismatchException extends LockEngineException {
  public SemaphoreMismatchException(String resource, long onNodes, int asked) {
    super("semaphore '" + resource + "' has " + onNodes + " permits; this caller asked for " + asked);
  }
}
