package dev.redlockd.engine;

import java.time.Duration;

/**
 * A granted or renewed lock.
 *
 * @param validity how long the holder may rely on it, from the moment the engine finished
 * @param fencingToken strictly increases per resource across grants
 */
public record Grant(String resource, String token, Duration validity, long fencingToken) {
  @Override
  public String toString() {
    // The token is the only proof of ownership: it stays out of logs.
    return "Grant[resource=" + resource + ", validity=" + validity.toMillis() + "ms, fencingToken="
        + Long.toUnsignedString(fencingToken) + "]";
  }
}
