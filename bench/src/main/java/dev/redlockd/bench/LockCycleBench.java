package dev.redlockd.bench;

import dev.redlockd.server.dev.DevCluster;
import dev.redlockd.server.dev.RedisProcess;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * A full lock cycle (acquire, then release, no contention) through redlockd and, in the same
 * run and on the same 5 Redis nodes, through Redisson's Redlock, Redisson's one-node lock, etcd
 * and two floors; then lock hand-off between clients queued on one resource. Prints the tables
 * and checks issue 17's targets.
 *
 * <pre>java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.LockCycleBench
 *     [--seconds-per-point 10] [--warmup-seconds 3] [--system-warmup-seconds 10] [--levels 1,32,128]
 *     [--channels 4] [--handoff-clients 8] [--handoff-hold-us 1000] [--keepalive]
 *     [--systems echo,floor,redlockd,redlockd-thrifty,jedis-redlock,redisson-redlock,redisson-lock,etcd]
 *     [--server-jar server/target/redlockd-server.jar] [--write docs/performance.md]</pre>
 *
 * <p>{@code --write} also draws docs/performance-*.svg from the tables it wrote;
 * {@code --charts-only docs/performance.md} redraws them from the page without measuring.
 *
 * -Dbench.serverJvm="..." adds JVM flags to the redlockd server (e.g. a JFR recording), and
 * -Dbench.serverFlags="..." server flags, as for KeepAliveLoad.
 *
 * <p>{@code redlockd-thrifty} is a second server process, started with {@code --thrifty-rounds}
 * on the same nodes; with {@code redlockd} in the same run the two are measured in turn at each
 * level. Each point also prints the script calls the nodes ran and the reads they made per
 * cycle (INFO commandstats and stats: counts, which a loaded machine does not change the way
 * it changes CPU times).
 */
public final class LockCycleBench {
  private static final String USAGE = """
      java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.LockCycleBench
          [--seconds-per-point 10] [--warmup-seconds 3] [--system-warmup-seconds 10] [--levels 1,32,128]
          [--channels 4] [--handoff-clients 8] [--handoff-hold-us 1000] [--keepalive]
          [--systems echo,floor,redlockd,redlockd-thrifty,jedis-redlock,redisson-redlock,redisson-lock,etcd]
          [--server-jar server/target/redlockd-server.jar] [--quiet-wait-seconds 900] [--write docs/performance.md]
          (--write also draws docs/performance-*.svg from the tables; --charts-only docs/performance.md redraws
          them from the page without measuring)
      -Dbench.serverJvm="..." adds JVM flags to the redlockd server, -Dbench.serverFlags="..." server flags.""";
  private static final int NODES = 5;
  /** Warm-up points for each system run at this many in flight, so both JVMs compile the hot path. */
  private static final int SYSTEM_WARMUP_IN_FLIGHT = 32;
  /** Longest wait for the cores to fall idle before a point (see Machine.settle). */
  private static final int SETTLE_MAX_SECONDS = 30;

  private int secondsPerPoint = 10;
  private int warmUpSeconds = 3;
  private int systemWarmUpSeconds = 10;
  private List<Integer> levels = List.of(1, 32, 128);
  private int channels = 4;
  private int handOffClients = 8;
  private long handOffHoldMicros = 1000;
  private boolean keepAlive;
  private Set<String> systems = Set.of("echo", "floor", "redlockd", "jedis-redlock", "redisson-redlock", "redisson-lock", "etcd");
  private Path serverJar = Path.of("server/target/redlockd-server.jar");
  private Path write;
  private long quietWaitSeconds = 900;

  private final BenchRun run = new BenchRun();
  private List<String> redisUris;
  private List<Long> redisPids;

  public static void main(String[] args) throws Exception {
    LockCycleBench bench = new LockCycleBench();
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (flag.equals("--help") || flag.equals("-h")) {
        System.out.println(USAGE);
        return;
      }
      if (flag.equals("--keepalive")) {
        bench.keepAlive = true;
        continue;
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(flag + " needs a value");
      }
      String value = args[++i];
      switch (flag) {
        case "--seconds-per-point" -> bench.secondsPerPoint = Integer.parseInt(value);
        case "--warmup-seconds" -> bench.warmUpSeconds = Integer.parseInt(value);
        case "--system-warmup-seconds" -> bench.systemWarmUpSeconds = Integer.parseInt(value);
        case "--levels" -> bench.levels = Arrays.stream(value.split(",")).map(String::trim).map(Integer::parseInt).toList();
        case "--channels" -> bench.channels = Integer.parseInt(value);
        case "--handoff-clients" -> bench.handOffClients = Integer.parseInt(value);
        case "--handoff-hold-us" -> bench.handOffHoldMicros = Long.parseLong(value);
        case "--systems" -> bench.systems = Set.of(value.split(","));
        case "--server-jar" -> bench.serverJar = Path.of(value);
        case "--quiet-wait-seconds" -> bench.quietWaitSeconds = Long.parseLong(value);
        case "--write" -> bench.write = Path.of(value);
        case "--charts-only" -> {
          // Redraws the charts from the tables an earlier run wrote into the page; measures nothing.
          System.out.println("wrote " + PerformanceCharts.write(Path.of(value)));
          return;
        }
        default -> throw new IllegalArgumentException("unknown flag " + flag + "\n" + USAGE);
      }
    }
    bench.run.commandLine = "java -cp bench/target/redlockd-bench.jar " + LockCycleBench.class.getName()
        + (args.length == 0 ? "" : " " + String.join(" ", args));
    bench.runAll();
    // Redisson and jetcd leave non-daemon threads behind their shutdown.
    System.exit(0);
  }

  private void runAll() throws Exception {
    long start = System.nanoTime();
    System.out.println(run.commandLine);
    run.busyAtStart = Machine.waitUntilQuiet(quietWaitSeconds);
    run.date = ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z", Locale.ROOT));
    run.commit = Machine.gitCommit();
    run.cores = Machine.cores();
    run.cpuModel = Machine.cpuModel();
    run.os = Machine.os();
    run.jvm = Machine.jvm();
    run.levels = levels;
    run.warmUpSeconds = warmUpSeconds;
    run.systemWarmUpSeconds = systemWarmUpSeconds;
    run.secondsPerPoint = secondsPerPoint;
    run.loadBefore = Machine.loadAverage();
    long[] stealAtStart = MachineCpu.readSteal();
    System.out.printf("%s, commit %s, %d cores, %s; load average %s%n", run.date, run.commit, run.cores, run.jvm,
        run.loadBefore);

    try (DevCluster cluster = DevCluster.start(NODES)) {
      redisUris = cluster.uris();
      redisPids = cluster.nodes().stream().map(RedisProcess::pid).toList();
      run.redis = "redis-server " + RedisAdmin.version(redisUris.get(0)) + " (" + cluster.binaryDescription() + ")";
      System.out.println(run.redis + ": " + redisUris);
      if (systems.contains("echo")) {
        measureEcho();
      }
      if (systems.contains("floor")) {
        measureInProcess(() -> new JedisFloor(redisUris.get(0), levels.stream().max(Integer::compare).orElse(1)));
      }
      if (systems.contains("redlockd") || systems.contains("redlockd-thrifty")) {
        measureRedlockd();
      }
      if (systems.contains("jedis-redlock")) {
        measureInProcess(() -> new JedisRedlockContender(redisUris, levels.stream().max(Integer::compare).orElse(1)));
      }
      if (systems.contains("redisson-redlock")) {
        measureInProcess(() -> new RedissonRedLockContender(redisUris));
      }
      if (systems.contains("redisson-lock")) {
        measureInProcess(() -> new RedissonLockContender(redisUris.get(0)));
      }
      if (systems.contains("etcd")) {
        measureEtcd();
      } else {
        run.etcd = "not in --systems";
      }
    }
    run.loadAfter = Machine.loadAverage();
    run.stealPercent = 100 * MachineCpu.stealShare(stealAtStart, MachineCpu.readSteal());
    List<String> busyAtEnd = Machine.busyProcesses();
    if (!busyAtEnd.isEmpty()) {
      run.notes.add("**running at the end of the run, so possibly during it**: " + String.join("; ", busyAtEnd));
    }
    if (keepAlive) {
      run.keepAlive = KeepAliveFigures.run(serverJar, 10_000, 30);
    } else {
      run.keepAlive = KeepAliveFigures.fromDoc(Path.of("docs/keepalive.md"));
    }
    run.totalSeconds = (System.nanoTime() - start) / 1e9;

    Report report = new Report(run);
    System.out.println();
    System.out.println(report.markdown());
    if (write != null) {
      report.write(write);
      System.out.println("wrote " + write + " and " + PerformanceCharts.write(write));
    }
  }

  private void measureEcho() throws Exception {
    try (GrpcEchoServer.Process echo = GrpcEchoServer.Process.start(serverJvmArgs(false))) {
      List<ManagedChannel> pool = GrpcChannels.open(echo.port(), channels);
      try (GrpcEcho contender = new GrpcEcho(pool, RedlockdGrpc.typicalRequestBytes())) {
        measure(contender, new CpuProbe(echo.pid(), redisPids));
      } finally {
        GrpcChannels.close(pool);
      }
    }
  }

  private void measureInProcess(Callable<Contender> make) throws Exception {
    RedisAdmin.flushAll(redisUris);
    try (Contender contender = make.call()) {
      measure(contender, new CpuProbe(0, redisPids, redisUris));
    }
  }

  /**
   * Flushed before the servers start, never while they run: a server would take the missing
   * incarnation keys for nodes that restarted empty and quarantine them. With both redlockd
   * rows, both servers run on the same nodes (as two replicas) and are measured in turn.
   */
  private void measureRedlockd() throws Exception {
    RedisAdmin.flushAll(redisUris);
    if (!Files.isReadable(serverJar)) {
      throw new IllegalStateException(serverJar + " missing: mvn -B -q -DskipTests -pl bench -am package");
    }
    boolean everyNode = systems.contains("redlockd");
    boolean thrifty = systems.contains("redlockd-thrifty");
    List<String> thriftyFlags = new ArrayList<>(serverFlags());
    thriftyFlags.add("--thrifty-rounds");
    // A null resource is skipped on close: each server runs only if its row is asked for.
    try (ServerUnderTest server = everyNode ? ServerUnderTest.start(serverJar, serverJvmArgs(true), serverFlags())
            : null;
        ServerUnderTest thriftyServer = thrifty ? ServerUnderTest.start(serverJar, serverJvmArgs(true), thriftyFlags)
            : null) {
      List<ManagedChannel> pool = server == null ? List.of() : GrpcChannels.open(server.port(), channels);
      List<ManagedChannel> thriftyPool = thriftyServer == null ? List.of()
          : GrpcChannels.open(thriftyServer.port(), channels);
      try {
        List<Measured> rows = new ArrayList<>();
        if (server != null) {
          rows.add(new Measured(new RedlockdGrpc(pool), new CpuProbe(server.pid(), redisPids, redisUris)));
        }
        if (thriftyServer != null) {
          rows.add(new Measured(new RedlockdGrpc(thriftyPool, 0, true),
              new CpuProbe(thriftyServer.pid(), redisPids, redisUris)));
        }
        measure(rows);
        if (thriftyServer != null) {
          // Printed only: the page's hand-off table is the every-node server's.
          System.out.printf("== hand-off, thrifty rounds: %d clients on one resource, hold %d us%n", handOffClients,
              handOffHoldMicros);
          handOff(List.of(thriftyPool));
        }
        if (server != null) {
          System.out.printf("== hand-off: %d clients on one resource, hold %d us, %d s warm-up, %d s measured%n",
              handOffClients, handOffHoldMicros, warmUpSeconds, secondsPerPoint);
          run.handOff = handOff(List.of(pool));
          System.out.println("== hand-off across two servers on the same nodes, notices on (the default)");
          run.handOffAcross = handOffAcross(pool, List.of());
        }
      } finally {
        GrpcChannels.close(pool);
        GrpcChannels.close(thriftyPool);
      }
    }
    if (!everyNode) {
      return;
    }
    System.out.println("== hand-off across two servers on the same nodes, --notify-waiters false (as before notices)");
    try (ServerUnderTest first = ServerUnderTest.start(serverJar, serverJvmArgs(false), silent())) {
      List<ManagedChannel> pool = GrpcChannels.open(first.port(), channels);
      try {
        run.handOffAcrossSilent = handOffAcross(pool, List.of("--notify-waiters", "false"));
      } finally {
        GrpcChannels.close(pool);
      }
    }
  }

  private List<String> silent() {
    List<String> flags = new ArrayList<>(serverFlags());
    flags.addAll(List.of("--notify-waiters", "false"));
    return flags;
  }

  /**
   * {@code pool}'s server and a second one started with {@code extraFlags}: first two clients,
   * one on each server, so that every hand-off crosses; then the usual clients spread over
   * both, where what share of the grants crosses says how fair the servers are to each other.
   */
  private HandOff.Across handOffAcross(List<ManagedChannel> pool, List<String> extraFlags) throws Exception {
    List<String> flags = new ArrayList<>(serverFlags());
    flags.addAll(extraFlags);
    try (ServerUnderTest second = ServerUnderTest.start(serverJar, serverJvmArgs(false), flags)) {
      List<ManagedChannel> secondPool = GrpcChannels.open(second.port(), channels);
      try {
        System.out.println("   two clients, one per server:");
        HandOff.Result pair = handOff(List.of(pool, secondPool), 2);
        System.out.printf("   %d clients over both servers:%n", handOffClients);
        return new HandOff.Across(pair, handOff(List.of(pool, secondPool), handOffClients));
      } finally {
        GrpcChannels.close(secondPool);
      }
    }
  }

  private HandOff.Result handOff(List<List<ManagedChannel>> servers) throws InterruptedException {
    return handOff(servers, handOffClients);
  }

  private HandOff.Result handOff(List<List<ManagedChannel>> servers, int clients) throws InterruptedException {
    HandOff.Result h = HandOff.run(servers, clients, handOffHoldMicros, Duration.ofSeconds(warmUpSeconds),
        Duration.ofSeconds(secondsPerPoint));
    System.out.printf("   %,d hand-offs, p50 %s ms, p99 %s ms; %,d across servers, p50 %s ms, p99 %s ms; "
            + "%d waited out, %d errors%n",
        h.handOffs().count(), Report.ms(h.handOffs().percentile(50)), Report.ms(h.handOffs().percentile(99)),
        h.acrossServers().count(), Report.ms(h.acrossServers().percentile(50)),
        Report.ms(h.acrossServers().percentile(99)), h.timedOut(), h.errors());
    return h;
  }

  private void measureEtcd() throws Exception {
    Optional<Path> binary = EtcdProcess.binary();
    if (binary.isEmpty()) {
      String skipped = "etcd: skipped (no etcd on PATH; apt-get install etcd-server)";
      System.out.println(skipped);
      run.etcd = "skipped (no etcd on PATH; apt-get install etcd-server)";
      return;
    }
    RedisAdmin.flushAll(redisUris);
    try (EtcdProcess etcd = EtcdProcess.start(binary.get())) {
      run.etcd = etcd.version() + " from " + binary.get() + ", one member on 127.0.0.1, data dir under "
          + System.getProperty("java.io.tmpdir");
      try (EtcdLock contender = new EtcdLock(etcd.endpoint(), etcd.version())) {
        measure(contender, new CpuProbe(etcd.pid(), redisPids));
      }
    }
  }

  /** One system: a discarded warm-up, then one point per level. */
  private void measure(Contender contender, CpuProbe cpu) throws InterruptedException {
    measure(List.of(new Measured(contender, cpu)));
  }

  /** A system to measure, and what its points read the CPU and the nodes' script calls from. */
  private record Measured(Contender contender, CpuProbe cpu) {}

  /**
   * Systems side by side: each one's discarded warm-up, then at each level one point of each in
   * turn, so that a change in the machine during the run touches them alike.
   */
  private void measure(List<Measured> rows) throws InterruptedException {
    for (Measured m : rows) {
      Contender contender = m.contender();
      run.how.put(contender.name(), contender.how());
      System.out.println("== " + contender.name() + ": " + contender.how());
      if (systemWarmUpSeconds > 0) {
        ClosedLoop.run(contender, SYSTEM_WARMUP_IN_FLIGHT, Duration.ZERO, Duration.ofSeconds(systemWarmUpSeconds),
            "warm", m.cpu());
      }
    }
    for (int level : levels) {
      for (Measured m : rows) {
        Contender contender = m.contender();
        double settled = Machine.settle(SETTLE_MAX_SECONDS);
        if (settled >= SETTLE_MAX_SECONDS) {
          run.notes.add(String.format(Locale.ROOT, "%s, %d in flight: the machine was still busy after %d s of "
              + "waiting for it to settle before the point", contender.name(), level, SETTLE_MAX_SECONDS));
        }
        ClosedLoop.Point p = ClosedLoop.run(contender, level, Duration.ofSeconds(warmUpSeconds),
            Duration.ofSeconds(secondsPerPoint), "run", m.cpu());
        run.add(p);
        long scripts = p.cpu().redisScripts();
        double cycles = p.latencies().count();
        System.out.printf(Locale.ROOT, "   %3d in flight: %,9.0f cycles/s, p50 %s ms, p99 %s ms, %d errors%s "
            + "(settled %.1f s before)%s%n", level, p.cyclesPerSecond(), Report.ms(p.latencies().percentile(50)),
            Report.ms(p.latencies().percentile(99)), p.errors(),
            p.firstError() == null ? "" : " (first: " + p.firstError() + ")", settled,
            scripts < 0 || cycles == 0 ? "" : String.format(Locale.ROOT,
                "; per cycle, %d Redis nodes together: %.2f script calls, %.2f reads", NODES, scripts / cycles,
                p.cpu().redisReads() / cycles));
      }
    }
  }

  /** The same heap for both server JVMs; profiling flags only for redlockd's. */
  private static List<String> serverJvmArgs(boolean redlockd) {
    List<String> args = new ArrayList<>(List.of("-Xmx1g"));
    String extra = System.getProperty("bench.serverJvm", "").trim();
    if (redlockd && !extra.isEmpty()) {
      args.addAll(List.of(extra.split("\\s+")));
    }
    return args;
  }

  private List<String> serverFlags() {
    List<String> flags = new ArrayList<>(List.of("--redis", String.join(",", redisUris)));
    String extra = System.getProperty("bench.serverFlags", "").trim();
    if (!extra.isEmpty()) {
      flags.addAll(List.of(extra.split("\\s+")));
    }
    return flags;
  }
}
