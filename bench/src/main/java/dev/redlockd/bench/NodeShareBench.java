package dev.redlockd.bench;

import dev.redlockd.server.dev.DevCluster;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import redis.clients.jedis.Jedis;

/**
 * Redis CPU per node when one server spreads resources over N nodes, each resource on n of them
 * (--nodes-per-resource): lock cycles (Acquire then Release over gRPC, as {@link RedlockdGrpc})
 * at a fixed rate, each on a resource of its own (none waits on another, and the resources fall
 * evenly on the sets), each node's {@code INFO cpu} (used_cpu_sys + used_cpu_user) and script
 * calls (INFO commandstats) read before and after. Every node's share of the cycles should fall
 * as n/N (every node of the set) or q/N (thrifty rounds, q = n/2+1) as N grows at the same rate.
 *
 * <p>Each point starts its own server with admission control off (a refused cycle costs the
 * nodes work no completed cycle accounts for), ramps the rate up from {@code --ramp-from} to the
 * target over {@code --ramp-seconds} (a cold server at the full rate falls behind and never
 * catches up), then measures at the target rate. A point is valid only when it reached 97 % of
 * the target and no cycle of it failed.
 *
 * <pre>java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.NodeShareBench
 *     [--nodes 5,7,9] [--per-resource 5] [--thrifty off,on] [--rate 4000] [--seconds 30]
 *     [--ramp-from 500] [--ramp-seconds 20] [--server-jar server/target/redlockd-server.jar]</pre>
 *
 * -Dbench.serverFlags="..." adds server flags.
 */
public final class NodeShareBench {
  /** A point below this share of the target rate measured a different load: invalid. */
  static final double VALID_SHARE_OF_RATE = 0.97;

  private List<Integer> nodeCounts = List.of(5, 7, 9);
  private int perResource = 5;
  private List<Boolean> thriftyModes = List.of(false, true);
  private int rate = 4000;
  private int seconds = 30;
  private int rampFrom = 500;
  private int rampSeconds = 20;
  private Path serverJar = Path.of("server/target/redlockd-server.jar");

  public static void main(String[] args) throws Exception {
    NodeShareBench bench = new NodeShareBench();
    for (int i = 0; i < args.length; i += 2) {
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("flag " + args[i] + " has no value");
      }
      String value = args[i + 1];
      switch (args[i]) {
        case "--nodes" -> bench.nodeCounts = ints(value);
        case "--per-resource" -> bench.perResource = Integer.parseInt(value);
        case "--thrifty" -> bench.thriftyModes = Arrays.stream(value.split(",")).map(String::trim)
            .map(NodeShareBench::onOff).toList();
        case "--rate" -> bench.rate = Integer.parseInt(value);
        case "--seconds" -> bench.seconds = Integer.parseInt(value);
        case "--ramp-from" -> bench.rampFrom = Integer.parseInt(value);
        case "--ramp-seconds" -> bench.rampSeconds = Integer.parseInt(value);
        case "--server-jar" -> bench.serverJar = Path.of(value);
        default -> throw new IllegalArgumentException("unknown flag " + args[i]);
      }
    }
    System.out.printf(Locale.ROOT, "%s, load average %s; %d cycles/s after a ramp from %d over %d s, %d s per point, "
            + "server flags '--admission-latency 0 %s'%n", Machine.cpuModel(), Machine.loadAverage(), bench.rate,
        bench.rampFrom, bench.rampSeconds, bench.seconds, System.getProperty("bench.serverFlags", ""));
    List<NodeShare> rows = new ArrayList<>();
    for (int n : bench.nodeCounts) {
      try (DevCluster cluster = DevCluster.start(n)) {
        for (boolean thrifty : bench.thriftyModes) {
          RedisAdmin.flushAll(cluster.uris()); // with no server running: none takes a node for restarted empty
          NodeShare row = bench.point(cluster.uris(), thrifty);
          System.out.println("   " + row.line());
          rows.add(row);
        }
      }
    }
    System.out.println();
    System.out.print(NodeShare.markdown(rows));
    System.exit(0); // gRPC's non-daemon threads
  }

  private static List<Integer> ints(String value) {
    return Arrays.stream(value.split(",")).map(String::trim).map(Integer::parseInt).toList();
  }

  private static boolean onOff(String value) {
    return switch (value) {
      case "on" -> true;
      case "off" -> false;
      default -> throw new IllegalArgumentException("--thrifty takes on, off or both (off,on), not " + value);
    };
  }

  private NodeShare point(List<String> uris, boolean thrifty) throws Exception {
    int nodes = uris.size();
    int n = Math.min(perResource, nodes);
    List<String> flags = new ArrayList<>(List.of("--redis", String.join(",", uris), "--nodes-per-resource",
        Integer.toString(n), "--node-timeout", "1s", "--admission-latency", "0"));
    if (thrifty) {
      flags.add("--thrifty-rounds");
    }
    String extra = System.getProperty("bench.serverFlags", "").trim();
    if (!extra.isEmpty()) {
      flags.addAll(List.of(extra.split("\\s+")));
    }
    try (ServerUnderTest server = ServerUnderTest.start(serverJar, List.of("-Xmx1g"), flags)) {
      List<ManagedChannel> channels = GrpcChannels.open(server.port(), 4);
      try {
        RedlockdGrpc cycles = new RedlockdGrpc(channels);
        OpenRate.Outcome warm = OpenRate.ramp(cycles, rampFrom, rate, rampSeconds);
        NodeReading before = NodeReading.of(uris);
        long serverCpuBefore = server.cpuTime().toNanos();
        AtomicReference<NodeReading> after = new AtomicReference<>();
        AtomicLong serverCpuAfter = new AtomicLong();
        // Read as the last cycle starts: the wait for late answers after it is not measured time.
        OpenRate.Outcome measured = OpenRate.steady(cycles, rate, seconds, () -> {
          after.set(NodeReading.of(uris));
          serverCpuAfter.set(cpuNanos(server));
        });
        double serverCores = (serverCpuAfter.get() - serverCpuBefore) / 1e9 / measured.seconds();
        return new NodeShare(nodes, n, thrifty, rate, warm, measured, after.get().minus(before), serverCores);
      } finally {
        GrpcChannels.close(channels);
      }
    }
  }

  private static long cpuNanos(ServerUnderTest server) {
    try {
      return server.cpuTime().toNanos();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Each node's CPU seconds (used_cpu_sys + used_cpu_user) and script calls so far. */
  record NodeReading(double[] cpuSeconds, long[] scripts) {
    static NodeReading of(List<String> uris) {
      double[] cpu = new double[uris.size()];
      long[] scripts = new long[uris.size()];
      for (int i = 0; i < cpu.length; i++) {
        URI u = URI.create(uris.get(i));
        try (Jedis jedis = new Jedis(u.getHost(), u.getPort())) {
          for (String line : jedis.info("cpu").split("\r?\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
              cpu[i] += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
          }
          scripts[i] = RedisAdmin.work(List.of(uris.get(i))).scripts();
        }
      }
      return new NodeReading(cpu, scripts);
    }

    NodeReading minus(NodeReading earlier) {
      double[] cpu = new double[cpuSeconds.length];
      long[] calls = new long[scripts.length];
      for (int i = 0; i < cpu.length; i++) {
        cpu[i] = cpuSeconds[i] - earlier.cpuSeconds[i];
        calls[i] = scripts[i] - earlier.scripts[i];
      }
      return new NodeReading(cpu, calls);
    }
  }
}
