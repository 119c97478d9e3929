package dev.redlockd.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whole-machine CPU use from /proc/stat: the load generator and the Redis nodes share the cores with the server. */
final class MachineCpu {
  private MachineCpu() {}

  /** {busy, total} jiffies since boot; zeros where /proc/stat is missing. */
  static long[] read() {
    Path stat = Path.of("/proc/stat");
    if (!Files.isReadable(stat)) {
      return new long[] {0, 0};
    }
    try {
      String[] f = Files.readAllLines(stat).get(0).trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < f.length && i <= 8; i++) {
        total += Long.parseLong(f[i]);
      }
      long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]); // idle + iowait
      return new long[] {total - idle, total};
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The share of the cores' time the hypervisor gave to other guests (steal, /proc/stat's 8th
   * field) over the last {@code seconds}, as a percentage: near 0 on a quiet host; a figure
   * measured with more is the neighbours', not ours.
   */
  static double stealPercent(long[] stealBefore, long[] stealAfter) {
    long total = stealAfter[1] - stealBefore[1];
    return total <= 0 ? 0 : 100.0 * (stealAfter[0] - stealBefore[0]) / total;
  }

  /** {steal, total} jiffies since boot; zeros where /proc/stat is missing. */
  static long[] steal() {
    Path stat = Path.of("/proc/stat");
    if (!Files.isReadable(stat)) {
      return new long[] {0, 0};
    }
    try {
      String[] f = Files.readAllLines(stat).get(0).trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < f.length && i <= 8; i++) {
        total += Long.parseLong(f[i]);
      }
      return new long[] {f.length > 8 ? Long.parseLong(f[8]) : 0, total};
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static double busyCores(long[] before, long[] after) {
    long total = after[1] - before[1];
    if (total <= 0) {
      return 0;
    }
    return Runtime.getRuntime().availableProcessors() * (double) (after[0] - before[0]) / total;
  }
}
