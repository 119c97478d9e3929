package dev.redlockd.client;

import java.time.Duration;

/**
 * How UNAVAILABLE (and, for Acquire, DEADLINE_EXCEEDED) is retried: the same call with the same
 * token, so a retry can never take a second lock. Backoff doubles from {@code initialBackoff}
 * up to {@code maxBackoff}.
 *
 * <p>UNAVAILABLE is retried for as long as the wait before the retry ends before the call's own
 * deadline (the call timeout, counted from the first attempt; for Acquire, its wait plus the call
 * timeout), not for a number of attempts: every call the client makes is idempotent, and a
 * replica that is restarting answers UNAVAILABLE while another one is up, so giving up after a
 * fixed count would fail calls that the next replica serves. {@code maxAttempts} counts the
 * attempts of an Acquire that ended DEADLINE_EXCEEDED (each has a timeout of its own, so time
 * cannot bound them), and a candidate's Campaign streams refused in a row. A {@code maxAttempts}
 * of 1 turns retries off altogether.
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

  /** Whether an UNAVAILABLE attempt is followed by a retry at {@code retryAtNanos}: if that is before the call's deadline. */
  boolean retriesUnavailable(long retryAtNanos, long callDeadlineNanos) {
    return maxAttempts > 1 && retryAtNanos - callDeadlineNanos < 0;
  }

  /** Whether an Acquire of which {@code timeouts} attempts ended DEADLINE_EXCEEDED is tried again. */
  boolean retriesTimeout(int timeouts) {
    return timeouts < maxAttempts;
  }
}
