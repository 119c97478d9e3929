package dev.redlockd.bench;

import dev.redlockd.server.dev.DevCluster;
import dev.redlockd.server.dev.RedisProcess;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;

/**
 * A full lock cycle (acquire, then release, no contention) through redlockd and, in the same
 * run and on the same 5 Redis nodes, through Redisson's Redlock, Redisson's one-node lock, etcd
 * and two floors; then lock hand-off between clients queued on one resource. Prints the tables
 * and checks issue 17's targets.
 *
 * <pre>java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.LockCycleBench
 *     [--seconds-per-point 10] [--warmup-seconds 3] [--system-warmup-seconds 10]
 *     [--system-warmup-max-seconds 60] [--levels 1,32,128]
 *     [--channels 4] [--handoff-clients 8] [--handoff-hold-us 1000] [--keepalive] [--frozen-node 1]
 *     [--handoff-only 3] [--pairs 5]
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
 *
 * <p>Each system is warmed up until it has settled ({@link SystemWarmUp}); at each level the
 * systems take turns going first.
 *
 * <p>{@code --frozen-node K} SIGSTOPs the K-th Redis node (1..5) after the warm-ups, for all of
 * the measured points, and SIGCONTs it at the end: only the redlockd rows (peers are left out),
 * no hand-off, and per point what the server sent the frozen node, from its metrics
 * ({@link FrozenNode}). It prints its own table and writes no page.
 *
 * <p>{@code --handoff-only N} measures no points: each redlockd server's warm-up, then its
 * one-server hand-off N times, the servers in turn, and the p50 of each run.
 *
 * <p>{@code --pairs N} measures the two redlockd servers only, N turns at each level, the one
 * going first changing from turn to turn, and prints the median of the turns' ratios with each
 * turn's ({@link PairedTurns}); no hand-off, no page.
 */
public final class LockCycleBench {
  private static final String USAGE = """
      java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.LockCycleBench
          [--seconds-per-point 10] [--warmup-seconds 3] [--system-warmup-seconds 10]
          [--system-warmup-max-seconds 60] [--levels 1,32,128]
          [--channels 4] [--handoff-clients 8] [--handoff-hold-us 1000] [--keepalive] [--frozen-node 1]
          [--handoff-only 3] [--pairs 5]
          [--systems echo,floor,redlockd,redlockd-thrifty,jedis-redlock,redisson-redlock,redisson-lock,etcd]
          [--server-jar server/target/redlockd-server.jar] [--quiet-wait-seconds 900] [--write docs/performance.md]
          (--write also draws docs/performance-*.svg from the tables; --charts-only docs/performance.md redraws
          them from the page without measuring)
      A system's warm-up runs at 32 in flight for at least --system-warmup-seconds, until two 2 s windows agree
      within 5 % and the JIT compilers are quiet, or --system-warmup-max-seconds have passed.
      --frozen-node K: node K (1..5) SIGSTOPped for the measured points; redlockd rows only, no hand-off, no --write.
      --handoff-only N: each redlockd server's warm-up, then its one-server hand-off N times, in turn; no --write.
      --pairs N: redlockd and redlockd-thrifty only, N turns at each level, the first of each turn alternating;
          the median ratio and each turn's; no hand-off, no --write.
      -Dbench.serverJvm="..." adds JVM flags to the redlockd server, -Dbench.serverFlags="..." server flags.""";
  private static final int NODES = 5;
  /** Warm-up points for each system run at this many in flight, so both JVMs compile the hot path. */
  private static final int SYSTEM_WARMUP_IN_FLIGHT = 32;
  /** Longest wait for the cores to fall idle before a point (see Machine.settle). */
  private static final int SETTLE_MAX_SECONDS = 30;

  private int secondsPerPoint = 10;
  private int warmUpSeconds = 3;
  private int systemWarmUpSeconds = 10;
  private int systemWarmUpMaxSeconds = 60;
  /** With N > 0: no points, only each redlockd server's hand-off, N times in turn. */
  private int handOffOnly;
  /** The node (1..NODES) SIGSTOPped for the measured points; 0: none. */
  private int frozenNode;
  private final List<FrozenNode.Row> frozenRows = new ArrayList<>();
  /** With N > 0: the two redlockd servers only, N turns at each level ({@link PairedTurns}). */
  private int pairs;
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
  private long[] stealAtStart;
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
        case "--system-warmup-max-seconds" -> bench.systemWarmUpMaxSeconds = Integer.parseInt(value);
        case "--frozen-node" -> bench.frozenNode = Integer.parseInt(value);
        case "--handoff-only" -> bench.handOffOnly = Integer.parseInt(value);
        case "--pairs" -> bench.pairs = Integer.parseInt(value);
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
    if (bench.frozenNode < 0 || bench.frozenNode > NODES) {
      throw new IllegalArgumentException("--frozen-node takes a node, 1.." + NODES + "\n" + USAGE);
    }
    if ((bench.frozenNode > 0 || bench.handOffOnly > 0) && bench.write != null) {
      throw new IllegalArgumentException("--frozen-node and --handoff-only write no page: the page is the full run's");
    }
    if (bench.frozenNode > 0 && bench.handOffOnly > 0) {
      throw new IllegalArgumentException("--frozen-node measures no hand-off: give one of them");
    }
    if (bench.pairs > 0 && (bench.frozenNode > 0 || bench.handOffOnly > 0 || bench.write != null)) {
      throw new IllegalArgumentException("--pairs is a mode of its own: no --frozen-node, --handoff-only or --write");
    }
    if (bench.pairs > 0 && !bench.systems.containsAll(Set.of("redlockd", "redlockd-thrifty"))) {
      throw new IllegalArgumentException("--pairs compares the two servers: --systems redlockd,redlockd-thrifty");
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
    run.systemWarmUpMaxSeconds = systemWarmUpMaxSeconds;
    run.secondsPerPoint = secondsPerPoint;
    run.loadBefore = Machine.loadAverage();
    stealAtStart = MachineCpu.readSteal();
    System.out.printf("%s, commit %s, %d cores, %s; load average %s%n", run.date, run.commit, run.cores, run.jvm,
        run.loadBefore);

    try (DevCluster cluster = DevCluster.start(NODES)) {
      redisUris = cluster.uris();
      redisPids = cluster.nodes().stream().map(RedisProcess::pid).toList();
      run.redis = "redis-server " + RedisAdmin.version(redisUris.get(0)) + " (" + cluster.binaryDescription() + ")";
      System.out.println(run.redis + ": " + redisUris);
      if (frozenNode > 0) {
        measureFrozen(cluster.nodes().get(frozenNode - 1));
        printFrozen(start);
        return;
      }
      if (handOffOnly > 0) {
        // The servers' own warm-ups, then their hand-offs: the lines it prints are the result.
        measureRedlockd();
        return;
      }
      if (pairs > 0) {
        measurePaired(start);
        return;
      }
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

  /**
   * The redlockd rows with one node SIGSTOPped from the end of the warm-ups to the end of the
   * last point; resumed however the run ends (and by DevCluster's exit hook if the JVM dies).
   */
  private void measureFrozen(RedisProcess frozen) throws Exception {
    List<String> left = systems.stream().filter(s -> !s.startsWith("redlockd")).sorted().toList();
    if (!left.isEmpty()) {
      System.out.println("frozen node: only the redlockd rows are measured; left out: " + String.join(", ", left));
    }
    RedisAdmin.flushAll(redisUris);
    List<String> answering = redisUris.stream().filter(uri -> !uri.equals(frozen.uri())).toList();
    int port = freePort();
    int thriftyPort = freePort();
    try (RedlockdServers servers = new RedlockdServers(List.of("--metrics-port", Integer.toString(port)),
        List.of("--metrics-port", Integer.toString(thriftyPort)))) {
      List<Measured> rows = new ArrayList<>();
      if (servers.everyNode != null) {
        FrozenNode watch = new FrozenNode(new ServerMetrics(port), frozen.uri());
        rows.add(new Measured(new RedlockdGrpc(servers.pool),
            new CpuProbe(servers.everyNode.pid(), redisPids, answering, watch), watch));
      }
      if (servers.thrifty != null) {
        FrozenNode watch = new FrozenNode(new ServerMetrics(thriftyPort), frozen.uri());
        rows.add(new Measured(new RedlockdGrpc(servers.thriftyPool, 0, true),
            new CpuProbe(servers.thrifty.pid(), redisPids, answering, watch), watch));
      }
      warmUp(rows);
      Map<Measured, FrozenNode.Counts> atStop = new HashMap<>();
      for (Measured m : rows) {
        atStop.put(m, m.frozen().read());
      }
      System.out.printf("== SIGSTOP node %d (%s, pid %d) for every measured point%n", frozenNode, frozen.uri(),
          frozen.pid());
      frozen.pause();
      long stoppedAt = System.nanoTime();
      try {
        points(rows, (m, p) -> frozenRows.add(new FrozenNode.Row(m.contender().name(), p, p.cpu().frozen(),
            m.frozen().read().minus(atStop.get(m)), (System.nanoTime() - stoppedAt) / 1e9)));
      } finally {
        frozen.resume();
        System.out.println("== SIGCONT node " + frozenNode);
      }
    }
  }

  /** A row for each redlockd server started: every-node first, then thrifty. */
  private List<Measured> rows(RedlockdServers servers) {
    List<Measured> rows = new ArrayList<>();
    if (servers.everyNode != null) {
      rows.add(new Measured(new RedlockdGrpc(servers.pool), new CpuProbe(servers.everyNode.pid(), redisPids, redisUris)));
    }
    if (servers.thrifty != null) {
      rows.add(new Measured(new RedlockdGrpc(servers.thriftyPool, 0, true),
          new CpuProbe(servers.thrifty.pid(), redisPids, redisUris)));
    }
    return rows;
  }

  /** The two redlockd servers on the same nodes, {@code pairs} turns at each level; prints the medians. */
  private void measurePaired(long start) throws Exception {
    List<String> left = systems.stream().filter(s -> !s.startsWith("redlockd")).sorted().toList();
    if (!left.isEmpty()) {
      System.out.println("pairs: only the two redlockd servers are measured; left out: " + String.join(", ", left));
    }
    RedisAdmin.flushAll(redisUris);
    int port = freePort();
    int thriftyPort = freePort();
    PairedTurns turns = new PairedTurns("every node", "thrifty");
    try (RedlockdServers servers = new RedlockdServers(List.of("--metrics-port", Integer.toString(port)),
        List.of("--metrics-port", Integer.toString(thriftyPort)))) {
      List<Measured> rows = rows(servers);
      Measured everyNode = rows.get(0);
      Measured thrifty = rows.get(1);
      warmUp(rows);
      for (int level : levels) {
        for (int turn = 0; turn < pairs; turn++) {
          boolean everyNodeFirst = turn % 2 == 0;
          ClosedLoop.Point first = point(everyNodeFirst ? everyNode : thrifty, level);
          ClosedLoop.Point second = point(everyNodeFirst ? thrifty : everyNode, level);
          turns.add(everyNodeFirst ? new PairedTurns.Turn(level, first, second)
              : new PairedTurns.Turn(level, second, first));
        }
      }
    }
    System.out.println();
    System.out.printf(Locale.ROOT, "%s, commit %s; %d cores (%s), %s; %s; %s; load average before %s, after %s; "
            + "CPU steal %.2f %%; total runtime %s%n", run.date, run.commit, run.cores, run.cpuModel, run.os, run.jvm,
        run.redis, run.loadBefore, Machine.loadAverage(),
        100 * MachineCpu.stealShare(stealAtStart, MachineCpu.readSteal()),
        Report.duration((System.nanoTime() - start) / 1e9));
    System.out.printf("%d turns at each level, each point %d s warm-up and %d s measured after the cores settled%n",
        pairs, warmUpSeconds, secondsPerPoint);
    run.notes.forEach(note -> System.out.println("- " + note));
    System.out.println();
    System.out.print(turns.markdown());
  }

  /** One point of {@code m} at {@code level}, after the cores settled; printed as the run's other points. */
  private ClosedLoop.Point point(Measured m, int level) throws InterruptedException {
    double settled = Machine.settle(SETTLE_MAX_SECONDS);
    ClosedLoop.Point p = ClosedLoop.run(m.contender(), level, Duration.ofSeconds(warmUpSeconds),
        Duration.ofSeconds(secondsPerPoint), "run", m.cpu());
    System.out.printf(Locale.ROOT, "   %-24s %3d in flight: %,9.0f cycles/s, p50 %s ms, p99 %s ms, %d errors, "
            + "Redis %.2f cores, machine %.2f (settled %.1f s before)%n", m.contender().name(), level,
        p.cyclesPerSecond(), Report.ms(p.latencies().percentile(50)), Report.ms(p.latencies().percentile(99)),
        p.errors(), p.cpu().redis(), p.cpu().machine(), settled);
    return p;
  }

  private void printFrozen(long start) {
    System.out.println();
    System.out.printf(Locale.ROOT, "%s, commit %s; %d cores (%s), %s; %s; load average before %s, after %s; "
            + "CPU steal %.2f %%; total runtime %s%n", run.date, run.commit, run.cores, run.cpuModel, run.os, run.jvm,
        run.loadBefore, Machine.loadAverage(), 100 * MachineCpu.stealShare(stealAtStart, MachineCpu.readSteal()),
        Report.duration((System.nanoTime() - start) / 1e9));
    System.out.printf("node %d of %d SIGSTOPped after the warm-ups, for every point; each point %d s warm-up, "
        + "%d s measured; the probe sends every node %.0f requests a second%n", frozenNode, NODES, warmUpSeconds,
        secondsPerPoint, FrozenNode.PROBES_PER_SECOND);
    run.notes.forEach(note -> System.out.println("- " + note));
    System.out.println();
    System.out.print(FrozenNode.markdown(frozenRows));
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
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
    boolean everyNode = systems.contains("redlockd");
    int port = freePort();
    int thriftyPort = freePort();
    try (RedlockdServers servers = new RedlockdServers(List.of("--metrics-port", Integer.toString(port)),
        List.of("--metrics-port", Integer.toString(thriftyPort)))) {
      ServerUnderTest server = servers.everyNode;
      ServerUnderTest thriftyServer = servers.thrifty;
      List<ManagedChannel> pool = servers.pool;
      List<ManagedChannel> thriftyPool = servers.thriftyPool;
      List<Measured> rows = rows(servers);
      if (handOffOnly > 0) {
        warmUp(rows);
      } else {
        measure(rows);
      }
      Map<String, HandOffServer> handOffServers = new LinkedHashMap<>();
      if (server != null) {
        handOffServers.put(BenchRun.REDLOCKD, new HandOffServer(pool, new ServerMetrics(port)));
      }
      if (thriftyServer != null) {
        handOffServers.put(BenchRun.REDLOCKD_THRIFTY, new HandOffServer(thriftyPool, new ServerMetrics(thriftyPort)));
      }
      Map<String, List<HandOff.Result>> handOffs = handOffs(handOffServers, Math.max(1, handOffOnly));
      if (server != null) {
        // The page's hand-off table is the every-node server's (its first, with --handoff-only).
        run.handOff = handOffs.get(BenchRun.REDLOCKD).get(0);
      }
      if (server != null && handOffOnly == 0) {
        System.out.println("== hand-off across two servers on the same nodes, notices on (the default)");
        run.handOffAcross = handOffAcross(pool, List.of());
      }
    }
    if (!everyNode || handOffOnly > 0) {
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

  /**
   * The redlockd servers the systems ask for, on the same nodes: every-node ({@code redlockd})
   * and thrifty ({@code redlockd-thrifty}), each with its channels; null and no channels for one
   * not asked for. Each takes the run's server flags and its own {@code extra} ones.
   */
  private final class RedlockdServers implements AutoCloseable {
    final ServerUnderTest everyNode;
    final ServerUnderTest thrifty;
    final List<ManagedChannel> pool;
    final List<ManagedChannel> thriftyPool;

    RedlockdServers(List<String> extra, List<String> thriftyExtra) throws IOException, InterruptedException {
      if (!Files.isReadable(serverJar)) {
        throw new IllegalStateException(serverJar + " missing: mvn -B -q -DskipTests -pl bench -am package");
      }
      everyNode = systems.contains("redlockd") ? start(extra) : null;
      try {
        List<String> thriftyFlags = new ArrayList<>(thriftyExtra);
        thriftyFlags.add("--thrifty-rounds");
        thrifty = systems.contains("redlockd-thrifty") ? start(thriftyFlags) : null;
      } catch (IOException | InterruptedException | RuntimeException e) {
        if (everyNode != null) {
          everyNode.close();
        }
        throw e;
      }
      pool = everyNode == null ? List.of() : GrpcChannels.open(everyNode.port(), channels);
      thriftyPool = thrifty == null ? List.of() : GrpcChannels.open(thrifty.port(), channels);
    }

    private ServerUnderTest start(List<String> extra) throws IOException, InterruptedException {
      List<String> flags = new ArrayList<>(serverFlags());
      flags.addAll(extra);
      return ServerUnderTest.start(serverJar, serverJvmArgs(true), flags);
    }

    @Override
    public void close() throws InterruptedException {
      GrpcChannels.close(pool);
      GrpcChannels.close(thriftyPool);
      try {
        if (thrifty != null) {
          thrifty.close();
        }
      } finally {
        if (everyNode != null) {
          everyNode.close();
        }
      }
    }
  }

  /**
   * The one-server hand-off of each server in {@code servers}, {@code repeats} times, the first
   * one changing from repeat to repeat, each after the cores have fallen idle: a hand-off run
   * right after a busy point, or always first, measured the machine rather than the server.
   */
  /** A server's channels, and its metrics for the nodes' side of its hand-offs. */
  private record HandOffServer(List<ManagedChannel> channels, ServerMetrics metrics) {}

  private Map<String, List<HandOff.Result>> handOffs(Map<String, HandOffServer> servers, int repeats)
      throws InterruptedException {
    List<String> names = List.copyOf(servers.keySet());
    Map<String, List<HandOff.Result>> results = new LinkedHashMap<>();
    for (int i = 0; i < repeats; i++) {
      for (int k = 0; k < names.size(); k++) {
        String name = names.get((k + i) % names.size());
        double settled = Machine.settle(SETTLE_MAX_SECONDS);
        System.out.printf(Locale.ROOT, "== hand-off, %s: %d clients on one resource, hold %d us, %d s warm-up, "
                + "%d s measured (settled %.1f s before)%n", name, handOffClients, handOffHoldMicros, warmUpSeconds,
            secondsPerPoint, settled);
        HandOffServer one = servers.get(name);
        results.computeIfAbsent(name, n -> new ArrayList<>())
            .add(handOff(List.of(one.channels()), handOffClients, one.metrics()));
      }
    }
    if (repeats > 1 || names.size() > 1) {
      results.forEach((name, list) -> System.out.printf("   hand-off p50 of %s, each run: %s ms%n", name,
          String.join(", ", list.stream().map(h -> Report.ms(h.handOffs().percentile(50))).toList())));
    }
    return results;
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
        HandOff.Result pair = handOff(List.of(pool, secondPool), 2, null);
        System.out.printf("   %d clients over both servers:%n", handOffClients);
        return new HandOff.Across(pair, handOff(List.of(pool, secondPool), handOffClients, null));
      } finally {
        GrpcChannels.close(secondPool);
      }
    }
  }

  /** A hand-off whose nodes' side is read from the nodes alone, {@code metrics} null, or also from its one server. */
  private HandOff.Result handOff(List<List<ManagedChannel>> servers, int clients, ServerMetrics metrics)
      throws InterruptedException {
    HandOff.Result h = HandOff.run(servers, clients, handOffHoldMicros, Duration.ofSeconds(warmUpSeconds),
        Duration.ofSeconds(secondsPerPoint), new NodeWork(redisUris, metrics));
    System.out.printf("   %,d hand-offs, p50 %s ms, p99 %s ms; %,d across servers, p50 %s ms, p99 %s ms; "
            + "%d waited out, %d errors%n",
        h.handOffs().count(), Report.ms(h.handOffs().percentile(50)), Report.ms(h.handOffs().percentile(99)),
        h.acrossServers().count(), Report.ms(h.acrossServers().percentile(50)),
        Report.ms(h.acrossServers().percentile(99)), h.timedOut(), h.errors());
    printPhases(h);
    return h;
  }

  /**
   * Where the hand-off's time went (see {@link HandOff.Phases}): phases of one run, to be
   * compared with each other rather than with another run's on a loaded machine.
   */
  private static void printPhases(HandOff.Result h) {
    HandOff.Phases p = h.phases();
    long count = Math.max(1, h.handOffs().count());
    NodeWork.Delta work = p.nodeWork();
    System.out.printf(Locale.ROOT, "     phases: Release's reply p50 %s ms; %d of %d grants came before it, the "
            + "others p50 %s ms after it; %d went back to the releasing client%n",
        Report.ms(p.releaseReplies().percentile(50)), p.grantsBeforeReply(), h.handOffs().count(),
        Report.ms(p.grantAfterReply().percentile(50)), p.grantsToReleaser());
    System.out.printf(Locale.ROOT, "     nodes per hand-off: %.2f script calls%s%n", work.scripts() / (double) count,
        Double.isNaN(work.requests()) ? "" : String.format(Locale.ROOT,
            "; the server's node requests %.2f (probes included), answered in %.3f ms on average",
            work.requests() / count, work.meanRequestMs()));
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

  /**
   * A system to measure, what its points read the CPU and the nodes' script calls from, and the
   * frozen node as its server counts it (null: none frozen).
   */
  private record Measured(Contender contender, CpuProbe cpu, FrozenNode frozen) {
    Measured(Contender contender, CpuProbe cpu) {
      this(contender, cpu, null);
    }

    /** The JVMs whose compilers a warm-up waits for: this one, and the server's if it has one. */
    List<Long> jvms() {
      long self = ProcessHandle.current().pid();
      return cpu.server() == 0 ? List.of(self) : List.of(self, cpu.server());
    }
  }

  /**
   * Systems side by side: each one's discarded warm-up, then at each level one point of each in
   * turn, so that a change in the machine during the run touches them alike.
   */
  private void measure(List<Measured> rows) throws InterruptedException {
    warmUp(rows);
    points(rows, (m, p) -> {});
  }

  /** Each system until it has settled (see {@link SystemWarmUp}); how long it took goes in the notes. */
  private void warmUp(List<Measured> rows) throws InterruptedException {
    for (Measured m : rows) {
      Contender contender = m.contender();
      run.how.put(contender.name(), contender.how());
      System.out.println("== " + contender.name() + ": " + contender.how());
      if (systemWarmUpMaxSeconds > 0) {
        SystemWarmUp.Result warm = SystemWarmUp.run(contender, SYSTEM_WARMUP_IN_FLIGHT,
            Duration.ofSeconds(systemWarmUpSeconds), Duration.ofSeconds(systemWarmUpMaxSeconds), m.jvms(), m.cpu());
        String said = String.format(Locale.ROOT, "warm-up of %s at %d in flight: %s", contender.name(),
            SYSTEM_WARMUP_IN_FLIGHT, warm.describe());
        System.out.println("   " + said);
        run.notes.add(said);
      }
    }
  }

  /**
   * At each level one point of each system, the first one changing from level to level so that
   * no system always runs right after the warm-ups or the previous level; {@code after} is told
   * of each point.
   */
  private void points(List<Measured> rows, BiConsumer<Measured, ClosedLoop.Point> after) throws InterruptedException {
    for (int l = 0; l < levels.size(); l++) {
      int level = levels.get(l);
      for (int r = 0; r < rows.size(); r++) {
        Measured m = rows.get((r + l) % rows.size());
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
                "; per cycle, %d Redis nodes together: %.2f script calls, %.2f reads",
                frozenNode > 0 ? NODES - 1 : NODES, scripts / cycles, p.cpu().redisReads() / cycles));
        FrozenNode.Counts frozen = p.cpu().frozen();
        if (frozen != null) {
          System.out.printf(Locale.ROOT, "       frozen node: %,.0f requests sent it, %,.0f timed out, in %.1f s%n",
              frozen.requests(), frozen.timeouts(), p.seconds());
        }
        after.accept(m, p);
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
