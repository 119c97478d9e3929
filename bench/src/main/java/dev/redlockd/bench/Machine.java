package dev.redlockd.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Facts about the machine and the tree a run was made on, and whether the machine is quiet. */
final class Machine {
  /** Processes whose presence makes figures worthless: the suite and other load commands. */
  static final String BUSY_PATTERN = "surefire|failsafe|ChaosIT|KeepAliveLoad";

  private Machine() {}

  static int cores() {
    return Runtime.getRuntime().availableProcessors();
  }

  static String cpuModel() {
    try {
      return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
          .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("unknown CPU");
    } catch (IOException e) {
      return "unknown CPU";
    }
  }

  static String jvm() {
    return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
  }

  static String os() {
    return System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch");
  }

  /** The 1, 5 and 15 minute load averages. */
  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "unknown";
    }
  }

  /** Short commit, plus a note when the work tree differs from it. Read-only git calls. */
  static String gitCommit() {
    String commit = run("git", "--no-optional-locks", "rev-parse", "--short", "HEAD").trim();
    if (commit.isEmpty()) {
      return "unknown (not a git work tree)";
    }
    String changed = run("git", "--no-optional-locks", "diff", "--stat", "HEAD").trim();
    return changed.isEmpty() ? commit : commit + " (with uncommitted changes in the work tree)";
  }

  /** Command lines of processes that would disturb a measurement (empty: quiet). */
  static List<String> busyProcesses() {
    List<String> lines = new ArrayList<>();
    for (String line : run("pgrep", "-fa", BUSY_PATTERN).split("\n")) {
      if (!line.isBlank()) {
        lines.add(line.length() > 160 ? line.substring(0, 160) + "..." : line);
      }
    }
    return lines;
  }

  /**
   * Waits while a test suite, another load command or anything else keeps the cores busy (a
   * suite takes minutes), re-checking every 15 s. Returns what still disturbed the machine when
   * it gave up, empty if it is quiet.
   */
  static List<String> waitUntilQuiet(long maxSeconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(maxSeconds);
    while (true) {
      List<String> busy = busyProcesses();
      double cores = idleCheckCores();
      if (cores > IDLE_CORES) {
        busy.add(String.format(java.util.Locale.ROOT, "%.2f cores busy before the bench started", cores));
      }
      if (busy.isEmpty() || System.nanoTime() > deadline) {
        return busy;
      }
      System.out.println("machine busy, waiting 15 s (load average " + loadAverage() + "):");
      busy.forEach(b -> System.out.println("  " + b));
      Thread.sleep(15_000);
    }
  }

  /** Above this, something else is running: a Maven build, an IDE indexing, a test suite. */
  private static final double IDLE_CORES = 0.3;

  private static double idleCheckCores() throws InterruptedException {
    long[] before = MachineCpu.read();
    Thread.sleep(3000);
    return MachineCpu.busyCores(before, MachineCpu.read());
  }

  /**
   * Waits until the cores fall idle between points: after a saturating point both JVMs still
   * have a backlog of methods queued for the JIT compiler (it got no CPU while the load ran),
   * and compiling them during the next point's measurement would be counted against it.
   * Returns the seconds waited.
   */
  static double settle(long maxSeconds) throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + TimeUnit.SECONDS.toNanos(maxSeconds);
    while (System.nanoTime() < deadline) {
      long[] before = MachineCpu.read();
      Thread.sleep(500);
      if (MachineCpu.busyCores(before, MachineCpu.read()) < IDLE_CORES) {
        break;
      }
    }
    return (System.nanoTime() - start) / 1e9;
  }

  private static String run(String... command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(false).start();
      p.getErrorStream().close();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(30, TimeUnit.SECONDS);
      return out;
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }
}
