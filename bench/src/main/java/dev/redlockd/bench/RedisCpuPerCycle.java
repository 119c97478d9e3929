package dev.redlockd.bench;

import dev.redlockd.engine.LockEngine;
import dev.redlockd.node.LuaScript;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.node.ScriptBatch;
import dev.redlockd.server.dev.DevCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.function.IntFunction;

/**
 * What one lock cycle (take a free lock, give it back) costs one Redis node in CPU, for
 * redlockd's scripts and for the plainest lock there is (SET NX PX, then compare-and-delete
 * in a script), sent the same way: one node, the same client, the same number in flight.
 * The node's own CPU counters (INFO cpu) over many cycles, divided by the cycles.
 *
 * <pre>java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.RedisCpuPerCycle [cycles]</pre>
 *
 * <p>With {@code --clock-watch}, only what reading TIME in every granting and renewing script
 * costs: acquire.lua + release.lua cycles and one-lease extend.lua renewals, as the scripts were
 * before the clock watch (resources under {@code before-clock-watch/}, copied from commit 85dce2f)
 * and as they are now, alternately, three times each, in the same run on the same node.
 */
public final class RedisCpuPerCycle {
  private static final int IN_FLIGHT = 256;
  private static final String TOKEN = "benchToken_0123456789abcdef";
  private static final String TTL_MS = "10000";
  private static final String PREFIX = "redlock:";
  private static final LuaScript ACQUIRE = LuaScript.load(LockEngine.class, "acquire");
  private static final LuaScript RELEASE = LuaScript.load(LockEngine.class, "release");
  private static final LuaScript COMPARE_AND_DELETE = LuaScript.of("compare-and-delete",
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0");
  /** What any script costs before it does anything: the floor under a cycle of two scripts. */
  private static final LuaScript EMPTY = LuaScript.of("empty", "return {1, '0', 1}");
  private static final LuaScript EXTEND = LuaScript.load(LockEngine.class, "extend");
  private static final LuaScript ACQUIRE_BEFORE = LuaScript.load(RedisCpuPerCycle.class, "before-clock-watch/acquire");
  private static final LuaScript EXTEND_BEFORE = LuaScript.load(RedisCpuPerCycle.class, "before-clock-watch/extend");

  private RedisCpuPerCycle() {}

  public static void main(String[] args) throws Exception {
    List<String> options = List.of(args);
    boolean clockWatch = options.contains("--clock-watch");
    int cycles = options.stream().filter(a -> !a.startsWith("--")).findFirst().map(Integer::parseInt).orElse(500_000);
    try (DevCluster cluster = DevCluster.start(1)) {
      String uri = cluster.uris().get(0);
      RedisNode node = new NettyRedisNode(NodeAddress.parse(uri), Duration.ofSeconds(5));
      try {
        node.command("SET", PREFIX + "node:incarnation", "bench").join();
        System.out.printf("Redis %s (%s), %,d cycles per row, %d in flight, load average %s%n",
            RedisAdmin.version(uri), cluster.binaryDescription(), cycles, IN_FLIGHT, Machine.loadAverage());
        if (clockWatch) {
          clockWatchRows(node, cycles);
          return;
        }
        double floor = row(node, "SET NX PX + compare-and-delete", cycles, i -> plainCycle(node, "plain:" + i));
        row(node, "redlockd acquire.lua + release.lua, a resource never locked before", cycles, floor,
            i -> redlockdCycle(node, "fresh-" + i));
        // The same 1,000 resources over and over: each one's fence counter is still alive.
        row(node, "redlockd acquire.lua + release.lua, a resource locked within its ttl", cycles, floor,
            i -> redlockdCycle(node, "hot-" + (i % 1_000)));
        row(node, "two scripts that do nothing, with acquire's and release's keys and arguments", cycles, floor,
            i -> emptyCycle(node, "empty-" + i));
        // Several scripts in one call (node.ScriptBatch), as a script (EVALSHA) and as a Redis 7
        // function (FCALL), the same acquires and releases, batches of a fixed size.
        ScriptBatch batch = LockEngine.scriptBatch();
        node.command("SCRIPT", "LOAD", batch.script().source()).join();
        node.command("FUNCTION", "LOAD", "REPLACE", batch.functionLibrary("redlockd_bench", "redlockd_batch")).join();
        for (int size : new int[] {1, 4, 16, 32}) {
          batchRow(node, batch, size, false, cycles, floor);
          batchRow(node, batch, size, true, cycles, floor);
        }
      } finally {
        node.close();
      }
    }
  }

  /**
   * The scripts before and after they read TIME, alternately, so that a drift of the machine
   * over the run falls on both alike; the floor is a SET NX PX + compare-and-delete cycle.
   */
  private static void clockWatchRows(RedisNode node, int cycles) throws Exception {
    double floor = row(node, "SET NX PX + compare-and-delete", cycles, i -> plainCycle(node, "plain:" + i));
    // Renewals of 1,000 held leases, over and over, as a kept lease's are.
    for (int i = 0; i < 1_000; i++) {
      node.eval(ACQUIRE, acquireKeys("held-" + i), List.of(TOKEN, TTL_MS, "", "r1")).join();
    }
    for (int n = 1; n <= 3; n++) {
      int run = n;
      row(node, "acquire.lua + release.lua, before the clock watch (no TIME), run " + run, cycles, floor,
          i -> scriptCycle(node, ACQUIRE_BEFORE, RELEASE, "before-" + run + "-" + i));
      row(node, "acquire.lua + release.lua, reading TIME, run " + run, cycles, floor,
          i -> scriptCycle(node, ACQUIRE, RELEASE, "now-" + run + "-" + i));
      row(node, "extend.lua of one held lease, before the clock watch (no TIME), run " + run, cycles, floor,
          i -> renewal(node, EXTEND_BEFORE, "held-" + (i % 1_000)));
      row(node, "extend.lua of one held lease, reading TIME, run " + run, cycles, floor,
          i -> renewal(node, EXTEND, "held-" + (i % 1_000)));
    }
  }

  private static CompletableFuture<?> renewal(RedisNode node, LuaScript extend, String resource) {
    return node.eval(extend, List.of(PREFIX + "node:incarnation", PREFIX + "{" + resource + "}:lock"),
        List.of(TOKEN, TTL_MS));
  }

  private static List<String> acquireKeys(String resource) {
    return List.of(PREFIX + "{" + resource + "}:lock", PREFIX + "node:incarnation", PREFIX + "{" + resource + "}:fence",
        PREFIX + "node:fence-max");
  }

  private static double row(RedisNode node, String name, int cycles, IntFunction<CompletableFuture<?>> cycle)
      throws Exception {
    return row(node, name, cycles, Double.NaN, cycle);
  }

  /** Warms up, then runs {@code cycles} cycles; prints and returns the node's CPU microseconds per cycle. */
  private static double row(RedisNode node, String name, int cycles, double floor,
      IntFunction<CompletableFuture<?>> cycle) throws Exception {
    run(cycle, -cycles / 10, 0); // negative ids: warm-up keys apart from the measured ones
    double before = cpuSeconds(node);
    long start = System.nanoTime();
    run(cycle, 0, cycles);
    double seconds = (System.nanoTime() - start) / 1e9;
    double micros = (cpuSeconds(node) - before) * 1e6 / cycles;
    System.out.printf("%-70s %6.2f us/cycle%s  (%,.0f cycles/s)%n", name, micros,
        Double.isNaN(floor) ? "" : String.format("  %.2fx", micros / floor), cycles / seconds);
    return micros;
  }

  /** Cycles in batches of {@code size}: one call of {@code size} acquires, then one of their releases. */
  private static void batchRow(RedisNode node, ScriptBatch batch, int size, boolean fcall, int cycles, double floor)
      throws Exception {
    String name = String.format("redlockd acquire + release, %2d of each per %s call", size,
        fcall ? "FCALL" : "EVALSHA (batch script)");
    row(node, name, cycles / size * size, floor, new IntFunction<>() {
      @Override
      public CompletableFuture<?> apply(int i) {
        return i % size != 0 ? CompletableFuture.completedFuture(null) : batchCycle(node, batch, size, fcall, "b" + i);
      }
    });
  }

  private static CompletableFuture<?> batchCycle(RedisNode node, ScriptBatch batch, int size, boolean fcall,
      String prefix) {
    List<ScriptBatch.Op> acquires = new ArrayList<>();
    List<ScriptBatch.Op> releases = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      String resource = prefix + "-" + i;
      String lock = PREFIX + "{" + resource + "}:lock";
      acquires.add(new ScriptBatch.Op(ACQUIRE, List.of(lock, PREFIX + "node:incarnation",
          PREFIX + "{" + resource + "}:fence", PREFIX + "node:fence-max"), List.of(TOKEN, TTL_MS, "", "r1")));
      releases.add(new ScriptBatch.Op(RELEASE, List.of(lock, PREFIX + "node:incarnation"),
          List.of(TOKEN, lock + ":released", "n" + resource)));
    }
    return node.command(call(batch, acquires, fcall)).thenCompose(done -> node.command(call(batch, releases, fcall)));
  }

  private static String[] call(ScriptBatch batch, List<ScriptBatch.Op> ops, boolean fcall) {
    List<String> command = new ArrayList<>(batch.command("EVALSHA", ops));
    if (fcall) {
      command.set(0, "FCALL");
      command.set(1, "redlockd_batch");
    }
    return command.toArray(String[]::new);
  }

  private static void run(IntFunction<CompletableFuture<?>> cycle, int from, int to) throws InterruptedException {
    Semaphore slots = new Semaphore(IN_FLIGHT);
    for (int i = from; i < to; i++) {
      slots.acquire();
      cycle.apply(i).whenComplete((r, failure) -> {
        if (failure != null) {
          failure.printStackTrace();
        }
        slots.release();
      });
    }
    slots.acquire(IN_FLIGHT);
  }

  private static CompletableFuture<?> plainCycle(RedisNode node, String key) {
    return node.command("SET", key, TOKEN, "NX", "PX", TTL_MS)
        .thenCompose(ok -> node.eval(COMPARE_AND_DELETE, List.of(key), List.of(TOKEN)));
  }

  private static CompletableFuture<?> redlockdCycle(RedisNode node, String resource) {
    return scriptCycle(node, ACQUIRE, RELEASE, resource);
  }

  private static CompletableFuture<?> emptyCycle(RedisNode node, String resource) {
    return scriptCycle(node, EMPTY, EMPTY, resource);
  }

  /** An acquire-shaped script, then a release-shaped one, with redlockd's keys and arguments. */
  private static CompletableFuture<?> scriptCycle(RedisNode node, LuaScript acquire, LuaScript release,
      String resource) {
    String lock = PREFIX + "{" + resource + "}:lock";
    List<String> acquireKeys = List.of(lock, PREFIX + "node:incarnation", PREFIX + "{" + resource + "}:fence",
        PREFIX + "node:fence-max");
    return node.eval(acquire, acquireKeys, List.of(TOKEN, TTL_MS, "", "r1"))
        .thenCompose(done -> node.eval(release, List.of(lock, PREFIX + "node:incarnation"),
            List.of(TOKEN, lock + ":released", "n" + resource)));
  }

  private static double cpuSeconds(RedisNode node) {
    String info = String.valueOf(node.command("INFO", "cpu").join());
    double total = 0;
    for (String line : info.split("\r?\n")) {
      if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
        total += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    return total;
  }
}
