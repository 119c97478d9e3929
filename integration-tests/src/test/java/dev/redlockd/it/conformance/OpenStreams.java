package dev.redlockd.it.conformance;

import dev.redlockd.testing.Scrape;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Where kept streams are: each replica's count of open KeepAlive or Campaign streams, read from
 * its metrics ({@code redlockd_streams_open}). A replica counts a stream from its open to its
 * end, so a client's stream on a replica that went silent stays counted there until the replica
 * hears the end (or stops it: no quorum, or its reader gone for a ttl).
 */
final class OpenStreams {
  static final String KEEP_ALIVE = "KeepAlive";
  static final String CAMPAIGN = "Campaign";
  private static final long POLL_MILLIS = 20;

  private OpenStreams() {}

  /** How many streams of this kind the replica whose metrics are on {@code metricsPort} has open. */
  static long count(int metricsPort, String kind) {
    return (long) Scrape.of(metricsPort).value("redlockd_streams_open", "kind", kind);
  }

  /**
   * The first of these replicas that has a stream of this kind open (a stream just opened may take
   * a moment to show), or -1 when none does within {@code within}.
   */
  static int carrying(List<Integer> metricsPorts, String kind, Duration within) throws InterruptedException {
    long until = System.nanoTime() + within.toNanos();
    do {
      for (int i = 0; i < metricsPorts.size(); i++) {
        if (count(metricsPorts.get(i), kind) > 0) {
          return i;
        }
      }
      Thread.sleep(POLL_MILLIS);
    } while (System.nanoTime() < until);
    return -1;
  }

  /**
   * Waits until the replica has at least {@code min} and at most {@code max} streams of each of
   * {@code kinds} open; true when it did within {@code within}.
   */
  static boolean await(int metricsPort, long min, long max, Duration within, String... kinds)
      throws InterruptedException {
    long until = System.nanoTime() + within.toNanos();
    do {
      boolean all = true;
      for (String kind : kinds) {
        long n = count(metricsPort, kind);
        all &= n >= min && n <= max;
      }
      if (all) {
        return true;
      }
      Thread.sleep(POLL_MILLIS);
    } while (System.nanoTime() < until);
    return false;
  }

  /** The counts of every kind, for a failure message: {@code KeepAlive 2, Campaign 1}. */
  static String describe(int metricsPort, String... kinds) {
    return List.of(kinds).stream().map(k -> k + " " + count(metricsPort, k)).collect(Collectors.joining(", "));
  }
}
