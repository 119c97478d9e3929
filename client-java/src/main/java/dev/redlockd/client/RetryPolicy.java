package dev.redlockd.client;

import java.time.Duration;
import java.util.Objects;

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
public final class RetryPolicy {
  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;

  private RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1");
    }
    if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
      throw new IllegalArgumentException("backoff must be non-negative and maxBackoff >= initialBackoff, was "
          + initialBackoff.toMillis() + " ms and " + maxBackoff.toMillis() + " ms");
    }
    this.maxAttempts = maxAttempts;
    this.initialBackoff = initialBackoff;
    this.maxBackoff = maxBackoff;
  }

  /** 4 attempts, backoff from 50 ms doubling up to 1 s. */
  public static RetryPolicy defaults() {
    return new RetryPolicy(4, Duration.ofMillis(50), Duration.ofSeconds(1));
  }

  /** No retries. */
  public static RetryPolicy none() {
    return new RetryPolicy(1, Duration.ZERO, Duration.ZERO);
  }

  /** This policy with {@code attempts} attempts (at least 1; 1 retries nothing). */
  public RetryPolicy withMaxAttempts(int attempts) {
    return new RetryPolicy(attempts, initialBackoff, maxBackoff);
  }

  /** This policy with the backoff after the first failed attempt; it may not exceed {@link #maxBackoff()}. */
  public RetryPolicy withInitialBackoff(Duration backoff) {
    return new RetryPolicy(maxAttempts, Objects.requireNonNull(backoff, "backoff"), maxBackoff);
  }

  /** This policy with the longest backoff; it may not be below {@link #initialBackoff()}. */
  public RetryPolicy withMaxBackoff(Duration backoff) {
    return new RetryPolicy(maxAttempts, initialBackoff, Objects.requireNonNull(backoff, "backoff"));
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  public Duration initialBackoff() {
    return initialBackoff;
  }

  public Duration maxBackoff() {
    return maxBackoff;
  }

  @Override
  public String toString() {
    return "RetryPolicy[maxAttempts=" + maxAttempts + ", initialBackoff=" + initialBackoff + ", maxBackoff="
        + maxBackoff + "]";
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
