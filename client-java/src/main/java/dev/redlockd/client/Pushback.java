package dev.redlockd.client;

import io.grpc.Metadata;
import io.grpc.Status;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The server's early refusal: UNAVAILABLE with the trailer {@code grpc-retry-pushback-ms} (gRPC's
 * retry design) says how long to stay away before trying again, or, negative or unparsable, not
 * to try again at all. Waiting at least that long, with jitter, is what lets a server that is
 * swamped (every holder of a restarted replica coming back at once) recover instead of being
 * hit again by the same crowd at the same instant.
 */
final class Pushback {
  static final Metadata.Key<String> KEY = Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);
  /** No trailer: the caller's own backoff applies. */
  static final long ABSENT = -1;
  /** A negative or unparsable value: do not retry. */
  static final long STOP = -2;

  private Pushback() {}

  /** The pushback a failed call carries, in nanoseconds, or {@link #ABSENT} or {@link #STOP}. */
  static long of(Throwable failure) {
    Metadata trailers = Status.trailersFromThrowable(failure);
    if (trailers == null) {
      return ABSENT;
    }
    String value = trailers.get(KEY);
    if (value == null) {
      return ABSENT;
    }
    return parse(value);
  }

  /** A trailer's value: non-negative decimal milliseconds in nanoseconds, else {@link #STOP}. */
  static long parse(String value) {
    String v = value.trim();
    if (v.isEmpty() || v.length() > 18 || !v.chars().allMatch(Character::isDigit)) {
      return STOP; // negative, fractional, huge or garbage: the server's "do not retry"
    }
    return TimeUnit.MILLISECONDS.toNanos(Long.parseLong(v));
  }

  /** The wait before the retry: a random time between the pushback and 1.5 times it. */
  static long jittered(long pushbackNanos) {
    return pushbackNanos + ThreadLocalRandom.current().nextLong(pushbackNanos / 2 + 1);
  }
}
