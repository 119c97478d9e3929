package dev.redlockd.engine;

import java.time.Duration;
import java.util.Objects;

/**
 * The engine's tunables; the server fills them from its flags.
 *
 * @param keyPrefix prefix of every key the engine writes
 * @param driftFactor share of the ttl held back for clock drift between nodes
 * @param minTtl smallest ttl a caller may ask for
 * @param maxTtl largest ttl a caller may ask for; also how long a node that lost its data sits out
 * @param retryDelay an Acquire that waits retries after a random delay between half and all of this
 * @param maxWaitingAcquires how many Acquire calls may wait at once before new ones are refused
 * @param probeInterval how often every node is checked (health, quarantine)
 * @param thriftyRounds whether grants and renewals go to a quorum of nodes first (in each key's
 *     {@link PreferenceOrder}), widening to the others only when one of them fails to answer yes,
 *     instead of to every node
 */
public record EngineConfig(
    String keyPrefix,
    double driftFactor,
    Duration minTtl,
    Duration maxTtl,
    Duration retryDelay,
    int maxWaitingAcquires,
    Duration probeInterval,
    boolean thriftyRounds) {

  public static final Duration FIXED_DRIFT = Duration.ofMillis(2);

  public EngineConfig {
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    requirePositive(minTtl, "min-ttl");
    requirePositive(maxTtl, "max-ttl");
    requirePositive(retryDelay, "retry-delay");
    requirePositive(probeInterval, "probe interval");
    if (maxTtl.compareTo(minTtl) < 0) {
      throw new IllegalArgumentException("max-ttl " + maxTtl.toMillis() + "ms is below min-ttl "
          + minTtl.toMillis() + "ms");
    }
    if (!(driftFactor >= 0 && driftFactor < 0.5)) {
      throw new IllegalArgumentException("drift-factor must lie in [0, 0.5), not " + driftFactor);
    }
    if (maxWaitingAcquires < 0) {
      throw new IllegalArgumentException("max-waiting-acquires must not be negative");
    }
  }

  /** Every node in every round (thrifty rounds off). */
  public EngineConfig(String keyPrefix, double driftFactor, Duration minTtl, Duration maxTtl, Duration retryDelay,
      int maxWaitingAcquires, Duration probeInterval) {
    this(keyPrefix, driftFactor, minTtl, maxTtl, retryDelay, maxWaitingAcquires, probeInterval, false);
  }

  public static EngineConfig defaults() {
    return new EngineConfig("redlock:", 0.01, Duration.ofMillis(10), Duration.ofHours(1),
        Duration.ofMillis(100), 10_000, Duration.ofMillis(500));
  }

  /** The part of a ttl that clock drift may eat: ttl * drift-factor + 2 ms. */
  public Duration drift(Duration ttl) {
    return Duration.ofNanos(driftNanos(ttl));
  }

  /** {@link #drift} in nanoseconds, for the validity of every grant and renewal without a Duration per step. */
  long driftNanos(Duration ttl) {
    return (long) (ttl.toNanos() * driftFactor) + FIXED_DRIFT.toNanos();
  }

  public EngineConfig withMaxTtl(Duration value) {
    return new EngineConfig(keyPrefix, driftFactor, minTtl, value, retryDelay, maxWaitingAcquires, probeInterval,
        thriftyRounds);
  }

  public EngineConfig withRetryDelay(Duration value) {
    return new EngineConfig(keyPrefix, driftFactor, minTtl, maxTtl, value, maxWaitingAcquires, probeInterval,
        thriftyRounds);
  }

  public EngineConfig withProbeInterval(Duration value) {
    return new EngineConfig(keyPrefix, driftFactor, minTtl, maxTtl, retryDelay, maxWaitingAcquires, value,
        thriftyRounds);
  }

  public EngineConfig withMaxWaitingAcquires(int value) {
    return new EngineConfig(keyPrefix, driftFactor, minTtl, maxTtl, retryDelay, value, probeInterval,
        thriftyRounds);
  }

  public EngineConfig withThriftyRounds(boolean value) {
    return new EngineConfig(keyPrefix, driftFactor, minTtl, maxTtl, retryDelay, maxWaitingAcquires, probeInterval,
        value);
  }

  private static void requirePositive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive");
    }
  }
}
