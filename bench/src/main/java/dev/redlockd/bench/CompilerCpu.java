package dev.redlockd.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time a JVM's JIT compiler threads used so far, read from /proc for any process (the
 * server is a JVM of its own, so CompilationMXBean cannot see it): a JVM still compiling runs
 * slower and steals cores from everything else on the machine, so a warm-up waits for this to
 * stop growing. Threads are recognised by HotSpot's names, which /proc cuts to 15 characters.
 */
final class CompilerCpu {
  private static final double TICKS_PER_SECOND = 100; // USER_HZ on Linux

  private CompilerCpu() {}

  /** Seconds of CPU the compiler threads of {@code pid} used so far; 0 where /proc has none. */
  static double seconds(long pid) {
    long ticks = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : tasks) {
        ticks += compilerTicks(read(task.resolve("stat")));
      }
    } catch (IOException | RuntimeException e) {
      return 0; // no such process (any more), or no /proc: nothing compiling that we can see
    }
    return ticks / TICKS_PER_SECOND;
  }

  /** utime + stime of one thread's /proc stat line when it is a JIT compiler thread, else 0. */
  static long compilerTicks(String stat) {
    if (stat.isEmpty()) {
      return 0;
    }
    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    if (!name.startsWith("C1 CompilerThre") && !name.startsWith("C2 CompilerThre")) {
      return 0;
    }
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  private static String read(Path stat) {
    try {
      return Files.readString(stat);
    } catch (IOException e) {
      return ""; // the thread ended in between
    }
  }
}
