package dev.redlockd.engine;

import java.time.Duration;

/**
 * A granted or renewed lease: a lock (permit 0) or one permit of a semaphore (1..N).
 *
 * @param validity how long the holder may rely on it, from the moment the engine finished
 * @param fencingToken strictly increases per resource across grants (per resource and permit
 *     for a semaphore's permits)
 * @param permit 0 for a lock, else which of the semaphore's N permits this lease is
 */
public record Grant(String resource, String token, Duration validity, long fencingToken, int permit) {
  /** A lock's grant. */
  public Grant(String resource, String token, Duration validity, long fencingToken) {
    this(resource, token, validity, fencingToken, 0);
  }

  @Override
  public String toString() {
    // The token is the only proof of ownership: it stays out of logs.
    return "Grant[resource=" + resource + (permit == 0 ? "" : ", permit=" + permit) + ", validity="
        + validity.toMillis() + "ms, fencingToken=" + Long.toUnsignedString(fencingToken) + "]";
  }
}
