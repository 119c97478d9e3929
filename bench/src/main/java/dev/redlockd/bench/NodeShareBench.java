package dev.redlockd.bench;

import dev.redlockd.server.dev.DevCluster;
import io.grpc.ManagedChannel;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.Jedis;

/**
 * Redis CPU per node when one server spreads resources over N nodes, each resource on n of them
 * (--nodes-per-resource): lock cycles (Acquire then Release over gRPC, as {@link RedlockdGrpc})
 * at a fixed rate, each on a resource of its own (none waits on another, and the resources fall
 * evenly on the sets), each node's {@code INFO cpu} (used_cpu_sys + used_cpu_user)
 * read before and after. Every node's share should fall as n/N (every node of the set) or q/N
 * (thrifty rounds, q = n/2+1) as N grows at the same rate.
 *
 * <pre>java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.NodeShareBench
 *     [--nodes 5,7,9] [--per-resource 5] [--rate 4000] [--seconds 30] [--warmup-seconds 10]
 *     [--server-jar server/target/redlockd-server.jar]</pre>
 *
 * -Dbench.serverFlags="..." adds server flags (e.g. --thrifty-rounds).
 */
public final class NodeShareBench {
  private List<Integer> nodeCounts = List.of(5, 7, 9);
  private int perResource = 5;
  private int rate = 4000;
  private int seconds = 30;
  private int warmUpSeconds = 10;
  private Path serverJar = Path.of("server/target/redlockd-server.jar");

  public static void main(String[] args) throws Exception {
    NodeShareBench bench = new NodeShareBench();
    for (int i = 0; i + 1 < args.length; i += 2) {
      String value = args[i + 1];
      switch (args[i]) {
        case "--nodes" -> bench.nodeCounts = Arrays.stream(value.split(",")).map(String::trim)
            .map(Integer::parseInt).toList();
        case "--per-resource" -> bench.perResource = Integer.parseInt(value);
        case "--rate" -> bench.rate = Integer.parseInt(value);
        case "--seconds" -> bench.seconds = Integer.parseInt(value);
        case "--warmup-seconds" -> bench.warmUpSeconds = Integer.parseInt(value);
        case "--server-jar" -> bench.serverJar = Path.of(value);
        default -> throw new IllegalArgumentException("unknown flag " + args[i]);
      }
    }
    System.out.printf("%s, load average %s; %d cycles/s, %d s per point after %d s warm-up, server flags '%s'%n",
        Machine.cpuModel(), Machine.loadAverage(), bench.rate, bench.seconds, bench.warmUpSeconds,
        System.getProperty("bench.serverFlags", ""));
    System.out.println("| N | n | cycles/s done | Redis CPU per node, % of a core (each) | mean | µs per node per cycle |");
    System.out.println("| --- | --- | --- | --- | --- | --- |");
    for (int n : bench.nodeCounts) {
      bench.point(n);
    }
    System.exit(0); // gRPC's non-daemon threads
  }

  private void point(int nodes) throws Exception {
    try (DevCluster cluster = DevCluster.start(nodes)) {
      List<String> uris = cluster.uris();
      List<String> flags = new ArrayList<>(List.of("--redis", String.join(",", uris), "--nodes-per-resource",
          Integer.toString(Math.min(perResource, nodes)), "--node-timeout", "1s"));
      String extra = System.getProperty("bench.serverFlags", "").trim();
      if (!extra.isEmpty()) {
        flags.addAll(List.of(extra.split("\\s+")));
      }
      try (ServerUnderTest server = ServerUnderTest.start(serverJar, List.of(), flags)) {
        List<ManagedChannel> channels = GrpcChannels.open(server.port(), 4);
        try {
          RedlockdGrpc cycles = new RedlockdGrpc(channels);
          drive(cycles, warmUpSeconds);
          double[] before = cpuSeconds(uris);
          long start = System.nanoTime();
          long done = drive(cycles, seconds);
          double elapsed = (System.nanoTime() - start) / 1e9;
          double[] after = cpuSeconds(uris);
          StringBuilder each = new StringBuilder();
          double sum = 0;
          for (int i = 0; i < nodes; i++) {
            double share = (after[i] - before[i]) / elapsed;
            sum += share;
            each.append(i == 0 ? "" : ", ").append(String.format("%.1f", 100 * share));
          }
          double mean = sum / nodes;
          System.out.printf("| %d | %d | %.0f | %s | %.1f | %s |%n", nodes, Math.min(perResource, nodes),
              done / elapsed, each, 100 * mean,
              done == 0 ? "(no cycle done)" : String.format("%.1f", 1e6 * mean * elapsed / done));
        } finally {
          GrpcChannels.close(channels);
        }
      }
    }
  }

  /** Starts {@code rate} cycles a second (a tick a millisecond) for {@code forSeconds}; the cycles completed. */
  private long drive(RedlockdGrpc cycles, int forSeconds) throws InterruptedException {
    String run = Long.toString(System.nanoTime(), 36); // the warm-up's resources are not the measured run's
    AtomicLong done = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicLong sent = new AtomicLong();
    java.util.concurrent.atomic.AtomicReference<Throwable> firstFailure = new java.util.concurrent.atomic.AtomicReference<>();
    ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();
    long start = System.nanoTime();
    ticks.scheduleAtFixedRate(() -> {
      long due = (System.nanoTime() - start) * rate / 1_000_000_000L;
      while (sent.get() < due) {
        long k = sent.getAndIncrement();
        cycles.cycle("ns:" + run + ":" + k).whenComplete((ok, e) -> {
          if (e == null) {
            done.incrementAndGet();
          } else {
            failed.incrementAndGet();
            firstFailure.compareAndSet(null, e);
          }
        });
      }
    }, 0, 1, TimeUnit.MILLISECONDS);
    Thread.sleep(forSeconds * 1000L);
    ticks.shutdownNow();
    ticks.awaitTermination(5, TimeUnit.SECONDS);
    if (failed.get() > 0) {
      System.out.printf("(%d of %d cycles failed, the first with %s)%n", failed.get(), sent.get(), firstFailure.get());
    }
    return done.get();
  }

  /** Each node's used_cpu_sys + used_cpu_user, seconds. */
  private static double[] cpuSeconds(List<String> uris) {
    double[] cpu = new double[uris.size()];
    for (int i = 0; i < cpu.length; i++) {
      URI u = URI.create(uris.get(i));
      try (Jedis jedis = new Jedis(u.getHost(), u.getPort())) {
        for (String line : jedis.info("cpu").split("\r?\n")) {
          if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
            cpu[i] += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
          }
        }
      }
    }
    return cpu;
  }
}
