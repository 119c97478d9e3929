package dev.redlockd.client;

import java.time.Duration;

/**
 * How UNAVAILABLE (and, for Acquire, DEADLINE_EXCEEDED) is retried: the same call with the same
 * token, so a retry can never take a second lock. Backoff doubles from {@code initialBackoff}
 * up to {@code maxBackoff}.
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
  public RetryPolicy {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1");
    }
    if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
      throw new IllegalArgumentException("backoff must be non-negative and max >= initial");
    }
  }

  public static RetryPolicy defaults() {
    return new RetryPolicy(4, Duration.ofMillis(50), Duration.ofSeconds(1));
  }

  /** No retries. */
  public static RetryPolicy none() {
    return new RetryPolicy(1, Duration.ZERO, Duration.ZERO);
  }

  Duration backoff(int attempt) {
    long nanos = initialBackoff.toNanos() << Math.min(attempt - 1, 20);
    return Duration.ofNanos(Math.min(nanos, maxBackoff.toNanos()));
  }
}
