package dev.redlockd.bench;

import java.util.Arrays;

/**
 * Every recorded latency, kept whole: a few hundred thousand longs per point are cheap, and
 * exact percentiles need no histogram tuning.
 */
final class Latencies {
  private long[] nanos = new long[1 << 16];
  private int size;

  synchronized void add(long n) {
    if (size == nanos.length) {
      nanos = Arrays.copyOf(nanos, size * 2);
    }
    nanos[size++] = n;
  }

  /** A sorted copy; the recorder may keep going. */
  synchronized Sorted sorted() {
    long[] copy = Arrays.copyOf(nanos, size);
    Arrays.sort(copy);
    return new Sorted(copy);
  }

  record Sorted(long[] nanos) {
    int count() {
      return nanos.length;
    }

    /** Nearest-rank percentile in nanoseconds; 0 when nothing was recorded. */
    long percentile(double p) {
      if (nanos.length == 0) {
        return 0;
      }
      int rank = (int) Math.ceil(p / 100.0 * nanos.length);
      return nanos[Math.min(nanos.length - 1, Math.max(0, rank - 1))];
    }
  }
}
