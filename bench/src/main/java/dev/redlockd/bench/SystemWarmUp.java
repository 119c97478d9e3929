package dev.redlockd.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A system's warm-up before its measured points: windows of cycles at one level, until the
 * throughput of the last two windows agrees and the JIT compilers of the JVMs involved (the
 * load generator's and the server's) have gone quiet, at least {@code min} and at most
 * {@code max}. A fixed warm-up left the run's first point still compiling (its server used
 * 0.78 cores for 495 cycles/s where the same server, warm, used 0.58 for 1,783).
 */
final class SystemWarmUp {
  static final Duration WINDOW = Duration.ofSeconds(2);
  /** Two windows within this share of each other's throughput count as the same. */
  static final double SAME_THROUGHPUT = 0.05;
  /** Compiler threads of all the JVMs together, in cores, below which compiling is over. */
  static final double QUIET_COMPILERS = 0.02;

  /** One window: its throughput, and the cores the JIT compilers used during it. */
  record Window(double cyclesPerSecond, double compilerCores) {}

  /** How the warm-up went: its windows, how long it took, and whether it settled or ran out of time. */
  record Result(List<Window> windows, double seconds, boolean settled) {
    String describe() {
      Window last = windows.get(windows.size() - 1);
      String lastTwo = windows.size() < 2 ? String.format(Locale.ROOT, "%,.0f", last.cyclesPerSecond())
          : String.format(Locale.ROOT, "%,.0f and %,.0f", windows.get(windows.size() - 2).cyclesPerSecond(),
              last.cyclesPerSecond());
      return String.format(Locale.ROOT, "%s after %.0f s (%d windows of %d s; the last %s cycles/s, compilers %.2f cores)",
          settled ? "settled" : "NOT settled", seconds, windows.size(), WINDOW.toSeconds(), lastTwo,
          last.compilerCores());
    }
  }

  private SystemWarmUp() {}

  /** Whether the warm-up may end after {@code windows}: see the class comment. */
  static boolean settled(List<Window> windows) {
    if (windows.size() < 2) {
      return false;
    }
    Window previous = windows.get(windows.size() - 2);
    Window last = windows.get(windows.size() - 1);
    double higher = Math.max(previous.cyclesPerSecond(), last.cyclesPerSecond());
    return higher > 0
        && Math.abs(previous.cyclesPerSecond() - last.cyclesPerSecond()) <= SAME_THROUGHPUT * higher
        && last.compilerCores() <= QUIET_COMPILERS;
  }

  /**
   * Runs windows of {@code inFlight} cycles of {@code contender} until settled (no sooner than
   * {@code min}) or {@code max} has passed; {@code jvms} are the pids whose compilers count.
   */
  static Result run(Contender contender, int inFlight, Duration min, Duration max, List<Long> jvms, CpuProbe cpu)
      throws InterruptedException {
    List<Window> windows = new ArrayList<>();
    long start = System.nanoTime();
    double elapsed = 0;
    boolean settled = false;
    while (elapsed < max.toNanos() / 1e9) {
      double compiledBefore = compilerSeconds(jvms);
      long windowStart = System.nanoTime();
      ClosedLoop.Point p = ClosedLoop.run(contender, inFlight, Duration.ZERO, WINDOW, "warm", cpu);
      double windowSeconds = (System.nanoTime() - windowStart) / 1e9;
      windows.add(new Window(p.cyclesPerSecond(), (compilerSeconds(jvms) - compiledBefore) / windowSeconds));
      elapsed = (System.nanoTime() - start) / 1e9;
      settled = settled(windows);
      if (settled && elapsed >= min.toNanos() / 1e9) {
        break;
      }
    }
    return new Result(windows, elapsed, settled);
  }

  private static double compilerSeconds(List<Long> jvms) {
    double total = 0;
    for (long pid : jvms) {
      total += CompilerCpu.seconds(pid);
    }
    return total;
  }
}
