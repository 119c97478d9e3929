package dev.redlockd.engine;

import java.time.Duration;

/**
 * A step of a Redis node's wall clock that this server saw: {@code size} is positive for a step
 * forward (locks there may have expired early), negative for a step back. The node is
 * quarantined for it.
 */
public record ClockStep(String node, Duration size) {
  public boolean forward() {
    return !size.isNegative();
  }
}
