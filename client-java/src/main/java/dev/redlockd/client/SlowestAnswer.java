package dev.redlockd.client;

/**
 * The slowest recent answer of one kept grant's streams, or of all of a client's (from the send of
 * a request to the answer that echoes it), which the silence bound grows with
 * ({@link RenewalStream}). It fades by half every ttl (four periods), so that a replica that was slow for a while and is fast again
 * is soon held to the usual bound. An answer later than the ttl is left out: its replica was
 * stopped (a frozen host that woke up), not slow, and what it would teach is to wait for a
 * silent replica.
 *
 * <p>Thread-safe: a client's grants share one. Taken under a grant's lock, never the other way
 * round.
 */
final class SlowestAnswer {
  /** Periods in a ttl: the requests go out every ttl/4. */
  private static final int PERIODS_PER_TTL = 4;

  private long slowestNanos;
  private long atNanos;

  /** An answer came {@code latencyNanos} after its request was sent, at {@code nowNanos}. */
  synchronized void answered(long latencyNanos, long nowNanos, long periodNanos) {
    if (latencyNanos > PERIODS_PER_TTL * periodNanos) {
      return;
    }
    if (latencyNanos >= nanos(nowNanos, periodNanos)) {
      slowestNanos = latencyNanos;
      atNanos = nowNanos;
    }
  }

  /** The slowest recent answer's time, faded by half for every ttl since it came. */
  synchronized long nanos(long nowNanos, long periodNanos) {
    if (slowestNanos == 0) {
      return 0;
    }
    double ttls = (double) (nowNanos - atNanos) / (PERIODS_PER_TTL * periodNanos);
    return (long) (slowestNanos * Math.pow(0.5, ttls));
  }
}
