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
   * Share of the machine's CPU time the hypervisor gave to other guests between two readings of
   * {@link #readSteal()} (0 to 1): on a shared VM, a run with steal is slower than its figures say.
   */
  static double stealShare(long[] before, long[] after) {
    long total = after[1] - before[1];
    return total <= 0 ? 0 : (double) (after[0] - before[0]) / total;
  }

  /** {steal, total} jiffies since boot, from the first line of /proc/stat; zeros where it is missing. */
  static long[] readSteal() {
    Path stat = Path.of("/proc/stat");
    if (!Files.isReadable(stat)) {
      return new long[] {0, 0};
    }
    try {
      return steal(Files.readAllLines(stat).get(0));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code cpu user nice system idle iowait irq softirq steal ...}: {steal, total of the first eight}. */
  static long[] steal(String cpuLine) {
    String[] f = cpuLine.trim().split("\\s+");
    long total = 0;
    for (int i = 1; i < f.length && i <= 8; i++) {
      total += Long.parseLong(f[i]);
    }
    return new long[] {f.length > 8 ? Long.parseLong(f[8]) : 0, total};
  }

  static double busyCores(long[] before, long[] after) {
    long total = after[1] - before[1];
    if (total <= 0) {
      return 0;
    }
    return Runtime.getRuntime().availableProcessors() * (double) (after[0] - before[0]) / total;
  }
}
