package dev.redlockd.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Where the two cores went during a point: this JVM (the load generator, and the in-process
 * clients), the server process of the system under test if it has one, the Redis nodes, and
 * the whole machine. Read from /proc; zeros where it is missing.
 */
final class CpuProbe {
  private static final double TICKS_PER_SECOND = 100; // USER_HZ on Linux

  private final long server;
  private final List<Long> redis;
  /** The nodes whose script calls are counted; empty: none counted. */
  private final List<String> redisUris;
  /** The SIGSTOPped node as the server's metrics count it; null: no node frozen. */
  private final FrozenNode frozen;

  /** {@code server} 0: none (the system runs in this JVM). */
  CpuProbe(long server, List<Long> redis) {
    this(server, redis, List.of());
  }

  /** Also counts the script calls and reads of the nodes at {@code redisUris} (see {@link RedisAdmin#work}). */
  CpuProbe(long server, List<Long> redis, List<String> redisUris) {
    this(server, redis, redisUris, null);
  }

  /** Also reads what the server sent the frozen node (see {@link FrozenNode}); leave it out of {@code redisUris}. */
  CpuProbe(long server, List<Long> redis, List<String> redisUris, FrozenNode frozen) {
    this.server = server;
    this.redis = List.copyOf(redis);
    this.redisUris = List.copyOf(redisUris);
    this.frozen = frozen;
  }

  /** The server process's pid, 0 when the system runs in this JVM. */
  long server() {
    return server;
  }

  record Snapshot(long nanos, long self, long server, long redis, long[] machine, long contextSwitches,
      RedisAdmin.Work redisWork, FrozenNode.Counts frozen) {}

  /**
   * Cores used by each party, and context switches per second on the whole machine: on a VM
   * a thread hand-off costs far more than the work handed off, so switches per cycle say much
   * about where a cycle's time goes. {@code redisScripts} and {@code redisReads}: the script calls
   * the nodes ran and the reads they made, all together (see {@link RedisAdmin#work}; -1 when not
   * counted). {@code frozen}: the requests the server sent the frozen node and how many timed out
   * (null when no node is frozen).
   */
  record Usage(double generator, double server, double redis, double machine, double contextSwitchesPerSecond,
      long redisScripts, long redisReads, FrozenNode.Counts frozen) {
    /** What none of the measured processes used: kernel threads, or something that should not be running. */
    double other() {
      return Math.max(0, machine - generator - (Double.isNaN(server) ? 0 : server) - redis);
    }
  }

  Snapshot snapshot() {
    long redisTicks = 0;
    for (long pid : redis) {
      redisTicks += ticks(pid);
    }
    return new Snapshot(System.nanoTime(), ticks(ProcessHandle.current().pid()), server == 0 ? 0 : ticks(server),
        redisTicks, MachineCpu.read(), contextSwitches(), redisUris.isEmpty() ? null : RedisAdmin.work(redisUris),
        frozen == null ? null : frozen.read());
  }

  Usage between(Snapshot a, Snapshot b) {
    double seconds = (b.nanos() - a.nanos()) / 1e9;
    return new Usage((b.self() - a.self()) / TICKS_PER_SECOND / seconds,
        server == 0 ? Double.NaN : (b.server() - a.server()) / TICKS_PER_SECOND / seconds,
        (b.redis() - a.redis()) / TICKS_PER_SECOND / seconds,
        MachineCpu.busyCores(a.machine(), b.machine()), (b.contextSwitches() - a.contextSwitches()) / seconds,
        a.redisWork() == null ? -1 : b.redisWork().scripts() - a.redisWork().scripts(),
        a.redisWork() == null ? -1 : b.redisWork().reads() - a.redisWork().reads(),
        a.frozen() == null ? null : b.frozen().minus(a.frozen()));
  }

  /** Context switches on all CPUs since boot (the "ctxt" line of /proc/stat); 0 where missing. */
  private static long contextSwitches() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
        if (line.startsWith("ctxt ")) {
          return Long.parseLong(line.substring(5).trim());
        }
      }
    } catch (IOException | RuntimeException e) {
      // reported as 0
    }
    return 0;
  }

  /** utime + stime of one process, in clock ticks. */
  private static long ticks(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }
}
