package dev.redlockd.it.conformance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Where this machine's CPU went between two snapshots: the harness's descendants by kind
 * (replicas, Redis, each language's runner) and how much of the machine stayed idle, read from
 * /proc/stat. A run on one host stands for replicas and clients on hosts of their own; when the
 * idle share falls to nothing, a late answer says more about the host than about a seam (issue 40).
 * A process that exited between the snapshots (a replica restarted) takes its CPU with it; the
 * idle share still counts it. Linux only (/proc).
 */
final class CpuAccount {
  private static final String HARNESS = "harness";

  private final long at;
  private final Map<Long, Kept> byPid;
  private final long[] machine; // {all jiffies, idle + iowait jiffies}, or null off Linux

  private record Kept(String kind, Duration cpu) {}

  private CpuAccount(long at, Map<Long, Kept> byPid, long[] machine) {
    this.at = at;
    this.byPid = byPid;
    this.machine = machine;
  }

  static CpuAccount now() {
    Map<Long, Kept> byPid = new HashMap<>();
    ProcessHandle.current().descendants().forEach(p -> p.info().totalCpuDuration().ifPresent(
        cpu -> byPid.put(p.pid(), new Kept(kind(p.pid()), cpu))));
    byPid.put(ProcessHandle.current().pid(), new Kept(HARNESS,
        ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO)));
    return new CpuAccount(System.nanoTime(), byPid, machine());
  }

  /**
   * "over 5.0 s, in cores: replicas 0.51, redis 0.20, python 0.15, ...; machine idle 0.71 of 2
   * cores": each kind's CPU since {@code earlier}, busiest first.
   */
  String since(CpuAccount earlier) {
    double seconds = (at - earlier.at) / 1e9;
    Map<String, Double> cores = new TreeMap<>();
    byPid.forEach((pid, now) -> {
      Kept before = earlier.byPid.get(pid);
      long nanos = now.cpu().toNanos() - (before == null ? 0 : before.cpu().toNanos());
      cores.merge(now.kind(), nanos / 1e9 / seconds, Double::sum);
    });
    String kinds = cores.entrySet().stream()
        .filter(e -> e.getValue() >= 0.005)
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .map(e -> String.format("%s %.2f", e.getKey(), e.getValue()))
        .collect(Collectors.joining(", "));
    int cpus = Runtime.getRuntime().availableProcessors();
    double idle = machine == null || earlier.machine == null || machine[0] == earlier.machine[0] ? Double.NaN
        : (double) (machine[1] - earlier.machine[1]) / (machine[0] - earlier.machine[0]) * cpus;
    return String.format("over %.1f s, in cores: %s; machine idle %.2f of %d cores", seconds, kinds, idle, cpus);
  }

  /** From /proc: ProcessHandle gives no command line for a process that rewrote its own (Redis). */
  private static String kind(long pid) {
    String command;
    try {
      command = new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"))).replace('\0', ' ');
    } catch (IOException | RuntimeException e) {
      return "other";
    }
    for (Language language : Language.values()) {
      if (command.contains(language.runnerMarker())) {
        return language.id; // first: Java's runner has the server's classes on its class path
      }
    }
    if (command.contains("redlockd-server")) {
      return "replicas";
    }
    if (command.contains("redis-server")) {
      return "redis";
    }
    return "other";
  }

  private static long[] machine() {
    try {
      String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long all = 0;
      for (int i = 1; i < f.length && i <= 8; i++) {
        all += Long.parseLong(f[i]);
      }
      return new long[] {all, Long.parseLong(f[4]) + Long.parseLong(f[5])};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
