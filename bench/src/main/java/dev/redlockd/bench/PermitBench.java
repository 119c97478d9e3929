package dev.redlockd.bench;

import dev.redlockd.server.dev.DevCluster;
import dev.redlockd.server.dev.RedisProcess;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Semaphore permits against the lock, and against Redisson's RPermitExpirableSemaphore on one
 * node: acquire-release cycles per second of a permit of N = 1, 8 and 64 through redlockd
 * (Redlock over 5 nodes, the same server jar as LockCycleBench), next to its lock row. Each
 * cycle in flight has a semaphore of its own, so no cycle waits for another; what grows with N
 * is what each Acquire reads (the N permit keys on every node).
 *
 * <pre>java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.PermitBench [--write docs/performance.md]</pre>
 */
public final class PermitBench {
  private static final String BEGIN = "<!-- permits:begin -->";
  private static final String END = "<!-- permits:end -->";
  private static final List<Integer> LEVELS = List.of(1, 32);
  private static final int[] PERMITS = {1, 8, 64};
  private static final Duration WARM_UP = Duration.ofSeconds(3);
  private static final Duration MEASURE = Duration.ofSeconds(10);

  private final List<String> rows = new ArrayList<>();
  private final List<String> hows = new ArrayList<>();

  private PermitBench() {}

  public static void main(String[] args) throws Exception {
    Path write = args.length == 2 && args[0].equals("--write") ? Path.of(args[1]) : null;
    new PermitBench().run(write);
  }

  private void run(Path write) throws Exception {
    String date = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
    String commit = Machine.gitCommit();
    String loadBefore = Machine.loadAverage();
    long[] steal = MachineCpu.readSteal();
    String redis;
    try (DevCluster cluster = DevCluster.start(5)) {
      List<String> uris = cluster.uris();
      List<Long> redisPids = cluster.nodes().stream().map(RedisProcess::pid).toList();
      redis = "redis-server " + RedisAdmin.version(uris.get(0)) + " (" + cluster.binaryDescription() + ")";
      System.out.println(redis + ", load average " + loadBefore);
      // Before the server starts: it initialises the nodes (their incarnation keys), which a
      // flush afterwards would take away, leaving every node quarantined.
      RedisAdmin.flushAll(uris);
      try (ServerUnderTest server = ServerUnderTest.start(Path.of("server/target/redlockd-server.jar"),
          List.of("-Xmx1g"), List.of("--redis", String.join(",", uris)))) {
        List<ManagedChannel> pool = GrpcChannels.open(server.port(), 4);
        try {
          CpuProbe cpu = new CpuProbe(server.pid(), redisPids);
          measure(() -> new RedlockdGrpc(pool), cpu);
          for (int n : PERMITS) {
            measure(() -> new RedlockdGrpc(pool, n), cpu);
          }
        } finally {
          GrpcChannels.close(pool);
        }
      }
      RedisAdmin.flushAll(uris);
      CpuProbe cpu = new CpuProbe(0, redisPids);
      measure(() -> new RedissonLockContender(uris.get(0)), cpu);
      for (int n : PERMITS) {
        measure(() -> new RedissonSemaphoreContender(uris.get(0), n), cpu);
      }
    }
    String markdown = markdown(date, commit, redis, loadBefore, Machine.loadAverage(),
        100 * MachineCpu.stealShare(steal, MachineCpu.readSteal()));
    System.out.println(markdown);
    if (write != null) {
      String page = Files.readString(write);
      int begin = page.indexOf(BEGIN);
      int end = page.indexOf(END);
      if (begin < 0 || end < begin) {
        throw new IllegalStateException(write + " has no " + BEGIN + " ... " + END + " section");
      }
      Files.writeString(write, page.substring(0, begin + BEGIN.length()) + "\n" + markdown + page.substring(end));
    }
  }

  private void measure(Supplier<Contender> make, CpuProbe cpu) throws Exception {
    try (Contender contender = make.get()) {
      hows.add("- **" + contender.name() + "**: " + contender.how());
      for (int level : LEVELS) {
        Machine.settle(10);
        ClosedLoop.Point p = ClosedLoop.run(contender, level, WARM_UP, MEASURE, "pb" + level, cpu);
        System.out.printf("%s, %d in flight: %,.0f cycles/s, p50 %s ms, %d errors%s%n", contender.name(), level,
            p.cyclesPerSecond(), Report.ms(p.latencies().percentile(50)), p.errors(),
            p.firstError() == null ? "" : " (" + p.firstError() + ")");
        rows.add(String.format(Locale.ROOT, "| %s | %d | %,.0f | %s | %s | %d |", contender.name(), level,
            p.cyclesPerSecond(), Report.ms(p.latencies().percentile(50)), Report.ms(p.latencies().percentile(99)),
            p.errors()));
      }
    }
  }

  private String markdown(String date, String commit, String redis, String loadBefore, String loadAfter,
      double stealPercent) {
    StringBuilder md = new StringBuilder();
    md.append("<!-- untested: the command that measured this section; a load run, not part of the suite -->\n")
        .append("```sh\njava -cp bench/target/redlockd-bench.jar dev.redlockd.bench.PermitBench --write docs/performance.md\n```\n\n")
        .append(String.format(Locale.ROOT, """
            - date: %s; commit: %s
            - machine: %d cores (%s), %s, %s
            - Redis: %s, 5 nodes on 127.0.0.1, no persistence; Redisson on node 1 only
            - load average (1/5/15 min) before: %s; after: %s; CPU steal over the run: %.2f %%
            - each point: %d s warm-up, then %d s measured; each cycle in flight on a semaphore (or lock) of its own

            | system | in flight | cycles/s | p50 ms | p99 ms | errors |
            | --- | ---: | ---: | ---: | ---: | ---: |
            """, date, commit, Machine.cores(), Machine.cpuModel(), Machine.os(), Machine.jvm(), redis, loadBefore,
            loadAfter, stealPercent, WARM_UP.toSeconds(), MEASURE.toSeconds()));
    rows.forEach(row -> md.append(row).append('\n'));
    md.append('\n');
    hows.forEach(how -> md.append(how).append('\n'));
    return md.toString();
  }
}
