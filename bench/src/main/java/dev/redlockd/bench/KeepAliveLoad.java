package dev.redlockd.bench;

import dev.redlockd.client.LockTokens;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.server.dev.DevCluster;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Holds many leases on KeepAlive streams against one server process and reports what it
 * costs: renewals per second, the server's CPU and memory, and leases lost.
 *
 * <pre>java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.KeepAliveLoad
 *     [--streams 10000] [--ttl-ms 3000] [--seconds 60] [--nodes 5] [--channels 8] [--rate 250] [--warmup-seconds 15]
 *     [--write docs/keepalive.md]</pre>
 *
 * <p>{@code --open-rate 250,500,1000,2000} sweeps the rate at which the streams open instead: for
 * each rate, a fresh server on the same Redis nodes, {@code --streams} opened at that rate, held
 * for {@code --seconds}, then half-closed; it counts the streams opened and kept, those refused
 * early (UNAVAILABLE with a {@code grpc-retry-pushback-ms} trailer, retried after the pushback
 * with jitter), and those lost (ended before the half-close), and with {@code --write} puts the
 * curve in a section of its own with a chart.
 *
 * <p>{@code --write} also draws docs/keepalive-*.svg from every run section in the page;
 * {@code --charts-only docs/keepalive.md} redraws them from the page without measuring.
 */
public final class KeepAliveLoad {
  private int streams = 10_000;
  private long ttlMs = 3000;
  private long seconds = 60;
  private int nodes = 5;
  private int channels = 8;
  /** Streams opened (and later half-closed) per second: a fleet of holders does not start in one instant. */
  private int rate = 250;
  private int warmupSeconds = 15;
  private Path serverJar = Path.of("server/target/redlockd-server.jar");
  private Path write;
  private String loadBefore;
  private String redis;

  private final AtomicLong held = new AtomicLong();
  private final AtomicLong jeopardy = new AtomicLong();
  private final AtomicLong endedEarly = new AtomicLong();
  private final AtomicLong acquireRetries = new AtomicLong();
  /** Calls refused early by the server's admission control (UNAVAILABLE with a pushback), retried after it. */
  private final AtomicLong refusals = new AtomicLong();
  /** Null: one run at {@link #rate}; else the rates of an open-rate sweep. */
  private List<Integer> openRates;
  /** Names the resources, so that the points of a sweep on the same nodes never meet. */
  private String resourcePrefix = "load-";
  /** Where the server's GC log goes; set per server started. */
  private Path gcLog;
  private final ConcurrentHashMap<Status.Code, AtomicLong> endings = new ConcurrentHashMap<>();

  public static void main(String[] args) throws Exception {
    KeepAliveLoad load = new KeepAliveLoad();
    for (int i = 0; i < args.length; i += 2) {
      String value = args[i + 1];
      switch (args[i]) {
        case "--streams" -> load.streams = Integer.parseInt(value);
        case "--ttl-ms" -> load.ttlMs = Long.parseLong(value);
        case "--seconds" -> load.seconds = Long.parseLong(value);
        case "--nodes" -> load.nodes = Integer.parseInt(value);
        case "--channels" -> load.channels = Integer.parseInt(value);
        case "--rate" -> load.rate = Integer.parseInt(value);
        case "--open-rate" -> load.openRates = OpenRateSweep.parseRates(value);
        case "--warmup-seconds" -> load.warmupSeconds = Integer.parseInt(value);
        case "--server-jar" -> load.serverJar = Path.of(value);
        case "--write" -> load.write = Path.of(value);
        case "--charts-only" -> {
          // Redraws the charts from the run sections already in the page; measures nothing.
          System.out.println("wrote " + KeepAliveCharts.write(Path.of(value)));
          return;
        }
        default -> throw new IllegalArgumentException("unknown flag " + args[i]);
      }
    }
    System.exit((load.openRates != null ? OpenRateSweep.run(load) : load.run()) ? 0 : 1);
  }

  /**
   * Sends each holder's requests every ttl/4, as the redlockd clients do: a stream without a
   * request for longer than its ttl is taken for a client that is gone, and no longer renewed.
   */
  private static final java.util.concurrent.ScheduledExecutorService ASKS =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "keepalive-asks");
        t.setDaemon(true);
        return t;
      });

  private final class Holder implements ClientResponseObserver<KeepAliveRequest, KeepAliveResponse> {
    /** Warm-up holders are left out of every figure. */
    final boolean counted;
    final CompletableFuture<Void> first = new CompletableFuture<>();
    final CompletableFuture<Status> end = new CompletableFuture<>();
    volatile boolean closing;
    /** A stream is open (guarded by this). */
    private boolean live;
    volatile long acquireSent;
    volatile long acquireAnswered;
    volatile long firstAnswered;
    /** The Acquire was granted: from here on an end before the half-close loses the lease. */
    volatile boolean granted;
    volatile int refused;
    volatile long firstSent;
    /** Until when the granted lease is valid without a renewal (System.nanoTime()). */
    volatile long validUntil;
    volatile LockServiceGrpc.LockServiceStub stub;
    volatile KeepAliveRequest keep;
    ClientCallStreamObserver<KeepAliveRequest> requests;

    Holder(boolean counted) {
      this.counted = counted;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<KeepAliveRequest> requestStream) {
      requests = requestStream;
    }

    @Override
    public void onNext(KeepAliveResponse response) {
      answered = true;
      if (counted) {
        (response.getState() == LeaseState.LEASE_STATE_HELD ? held : jeopardy).incrementAndGet();
      }
      if (firstAnswered == 0) {
        firstAnswered = System.nanoTime();
      }
      first.complete(null);
    }

    @Override
    public void onError(Throwable t) {
      streamEnded();
      Status status = Status.fromThrowable(t);
      long pushbackMs = pushbackMillis(t);
      if (pushbackMs >= 0 && firstAnswered == 0 && !closing) {
        // Refused early, before the stream kept anything: the lease is as it was; come back after
        // the pushback (with jitter) while the lease is still valid by then.
        long delayMs = withJitter(pushbackMs);
        if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMs) < validUntil) {
          refusedOnce(this);
          CompletableFuture.delayedExecutor(delayMs, TimeUnit.MILLISECONDS).execute(this::open);
          return;
        }
      }
      finished(status);
    }

    /** Opens (or opens again) the KeepAlive stream of the granted lease, and asks every ttl/4. */
    synchronized void open() {
      stub.keepAlive(this);
      requests.onNext(keep.toBuilder().setSequence(++sequence).build());
      live = true;
      if (closing) {
        requests.onCompleted(); // the half-close came while it waited to open again
        return;
      }
      if (asking == null) {
        asking = ASKS.scheduleAtFixedRate(this::ask, ttlMs / 4, ttlMs / 4, TimeUnit.MILLISECONDS);
      }
    }

    private long sequence; // guarded by this
    private java.util.concurrent.ScheduledFuture<?> asking; // guarded by this

    /** One more request on the live stream: the server renews at once. */
    private synchronized void ask() {
      if (live && !closing) {
        requests.onNext(keep.toBuilder().setSequence(++sequence).build());
      }
    }

    private synchronized void stopAsking() {
      if (asking != null) {
        asking.cancel(false);
      }
    }

    /** The holder lets go: half-closes its stream, or the one it opens next if it waits to open again. */
    synchronized void halfClose() {
      if (closing) {
        return;
      }
      closing = true;
      if (live) {
        requests.onCompleted();
      }
    }

    private synchronized void streamEnded() {
      live = false;
    }

    @Override
    public void onCompleted() {
      streamEnded();
      finished(Status.OK);
    }

    /** The lease was granted and its stream ended before the holder half-closed it. */
    volatile boolean lostBeforeClose;
    /** The stream has had an answer: it was not (or no longer) refused. */
    volatile boolean answered;

    void finished(Status status) {
      stopAsking();
      if (counted && !closing) {
        endedEarly.incrementAndGet();
      }
      if (granted && !closing) {
        lostBeforeClose = true;
      }
      if (counted) {
        endings.computeIfAbsent(status.getCode(), c -> new AtomicLong()).incrementAndGet();
      }
      if (firstAnswered == 0) {
        firstAnswered = System.nanoTime();
      }
      first.complete(null);
      end.complete(status);
    }
  }

  boolean run() throws Exception {
    loadBefore = Machine.loadAverage();
    Path dir = java.nio.file.Files.createTempDirectory("keepalive-load");
    gcLog = dir.resolve("server-gc.log");
    try (DevCluster cluster = DevCluster.start(nodes);
        ServerUnderTest server = ServerUnderTest.start(serverJar, jvmArgs(),
            serverFlags(cluster))) {
      redis = "redis-server " + RedisAdmin.version(cluster.uris().get(0)) + " (" + cluster.binaryDescription() + ")";
      List<ManagedChannel> pool = new ArrayList<>();
      for (int i = 0; i < channels; i++) {
        pool.add(Grpc.newChannelBuilder("127.0.0.1:" + server.port(), InsecureChannelCredentials.create()).build());
      }
      try {
        return measure(server, pool);
      } finally {
        pool.forEach(ManagedChannel::shutdownNow);
      }
    } finally {
      deleteTree(dir);
    }
  }

  static void deleteTree(Path dir) throws java.io.IOException {
    try (var files = java.nio.file.Files.walk(dir)) {
      for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        java.nio.file.Files.deleteIfExists(f);
      }
    }
  }

  private boolean measure(ServerUnderTest server, List<ManagedChannel> pool) throws Exception {
    com.google.protobuf.Duration ttl = com.google.protobuf.Duration.newBuilder()
        .setSeconds(ttlMs / 1000).setNanos((int) (ttlMs % 1000) * 1_000_000).build();
    warmUp(pool, ttl);
    System.out.printf("acquiring %d leases (ttl %d ms) and keeping each alive on a stream, %d per second...%n",
        streams, ttlMs, rate);
    List<Holder> holders = new ArrayList<>(streams);
    long openStart = System.nanoTime();
    for (int i = 0; i < streams; i++) {
      pace(openStart, i);
      Holder h = new Holder(true);
      holders.add(h);
      LockServiceGrpc.LockServiceStub stub = LockServiceGrpc.newStub(pool.get(i % pool.size()));
      acquireThenKeep(stub, h, AcquireRequest.newBuilder()
          .setResource("load-" + i).setTtl(ttl).setOwner("keepalive-load").setToken(LockTokens.newToken()).build(), 0);
    }
    CompletableFuture.allOf(holders.stream().map(h -> h.first).toArray(CompletableFuture[]::new))
        .get(2, TimeUnit.MINUTES);
    double openSeconds = (System.nanoTime() - openStart) / 1e9;
    System.out.printf("all %d streams answered in %.1f s%n", streams, openSeconds);
    String acquireTimes = percentiles(holders, h -> h.acquireAnswered - h.acquireSent);
    String firstAnswerTimes = percentiles(holders, h -> h.firstAnswered - h.acquireAnswered);
    System.out.println("Acquire round trip: " + acquireTimes);
    System.out.println("Acquire answer to first KeepAlive answer: " + firstAnswerTimes);

    // Steady state: let renewals settle for one ttl, then measure.
    Thread.sleep(ttlMs);
    long heldAtStart = held.get();
    long jeopardyWhileOpening = jeopardy.get();
    long[] machineAtStart = MachineCpu.read();
    Duration cpuAtStart = server.cpuTime();
    long start = System.nanoTime();
    long maxRss = 0;
    while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(seconds)) {
      Thread.sleep(5000);
      maxRss = Math.max(maxRss, server.rssMiB());
      double elapsed = (System.nanoTime() - start) / 1e9;
      System.out.printf("%5.0f s: %,d renewals/s, jeopardy %d, streams ended %d, server RSS %d MiB%n", elapsed,
          (long) ((held.get() - heldAtStart) / elapsed), jeopardy.get(), endedEarly.get(), server.rssMiB());
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    long renewals = held.get() - heldAtStart;
    double cpuCores = (server.cpuTime().minus(cpuAtStart).toMillis() / 1000.0) / elapsed;
    double machineCores = MachineCpu.busyCores(machineAtStart, MachineCpu.read());
    long jeopardyWhileHeld = jeopardy.get() - jeopardyWhileOpening;
    long jeopardyBeforeGc = jeopardy.get();
    // A forced full GC pauses the server: renewals in flight then miss the node timeout, which
    // KeepAlive reports as JEOPARDY and survives. Counted apart from the steady state.
    long heap = server.heapUsedAfterGcMiB();
    Thread.sleep(ttlMs);
    long jeopardyAroundGc = jeopardy.get() - jeopardyBeforeGc;

    // Every lease must still be held: a competitor is refused on a sample of them.
    int sample = Math.min(200, streams);
    long stillHeld = 0;
    // What the competitors got other than ABORTED: OK would be a second holder; a code other
    // than ABORTED only says the competitor could not tell.
    Map<String, Integer> notRefused = new TreeMap<>();
    LockServiceGrpc.LockServiceBlockingStub blocking = LockServiceGrpc.newBlockingStub(pool.get(0));
    for (int i = 0; i < sample; i++) {
      String resource = "load-" + (i * (streams / sample));
      try {
        blocking.acquire(AcquireRequest.newBuilder().setResource(resource).setTtl(ttl).build());
        notRefused.merge("OK (granted to the competitor: " + resource + ")", 1, Integer::sum);
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() == Status.Code.ABORTED) {
          stillHeld++;
        } else {
          notRefused.merge(e.getStatus().getCode() + " (" + e.getStatus().getDescription() + ")", 1, Integer::sum);
        }
      }
    }
    if (!notRefused.isEmpty()) {
      System.out.println("competitor Acquire calls not refused: " + notRefused);
    }

    long lost = endedEarly.get();
    long closeStart = System.nanoTime();
    for (int i = 0; i < holders.size(); i++) {
      pace(closeStart, i);
      Holder h = holders.get(i);
      h.halfClose();
    }
    CompletableFuture.allOf(holders.stream().map(h -> h.end).toArray(CompletableFuture[]::new))
        .get(2, TimeUnit.MINUTES);
    long okEnds = endings.getOrDefault(Status.Code.OK, new AtomicLong()).get();

    String table = String.format(Locale.ROOT, """
        | figure | value |
        | --- | --- |
        | open KeepAlive streams | %,d |
        | ttl (each holder asks for a renewal every ttl/4, as the clients do) | %d ms |
        | Redis nodes | %d |
        | measured for | %.0f s (after all streams answered, plus one ttl) |
        | renewals per second (HELD responses) | %,.0f (expected %,.0f) |
        | open and half-close rate, after a %d s warm-up at that rate on other resources | %,d streams/s |
        | Acquire round trip while opening | %s |
        | from the Acquire answer to the stream's first answer | %s |
        | Acquire calls retried after UNAVAILABLE while opening | %d |
        | JEOPARDY responses while the streams opened | %d |
        | JEOPARDY responses in the measured window | %d |
        | JEOPARDY responses around a forced full GC of the server (jcmd GC.run) | %d |
        | streams ended before the half-close (leases lost) | %d |
        | sampled leases still held at the end (competitor refused) | %d of %d%s |
        | streams ended OK after half-close | %,d of %,d |
        | server CPU | %.2f cores |
        | whole machine busy (server, load generator, Redis nodes, anything else) | %.2f cores of %d |
        | server young-GC pauses (whole run, from -Xlog:gc) | %s |
        | server heap in use after a full GC | %d MiB |
        | server peak RSS | %d MiB |
        | time to open all streams (paced) and get their first answer | %.1f s |
        """, streams, ttlMs, nodes, elapsed, renewals / elapsed, streams / (ttlMs / 4000.0), warmupSeconds, rate,
        acquireTimes, firstAnswerTimes, acquireRetries.get(), jeopardyWhileOpening, jeopardyWhileHeld,
        jeopardyAroundGc, lost, stillHeld, sample, notRefused.isEmpty() ? "" : "; the others: " + notRefused, okEnds, streams, cpuCores, machineCores,
        Runtime.getRuntime().availableProcessors(), GcPauses.read(gcLog).describe(), heap, maxRss, openSeconds);
    System.out.println();
    System.out.println(table);
    // JEOPARDY is the warning KeepAlive is built to give; it is counted, but only a lost lease fails.
    boolean pass = lost == 0 && stillHeld == sample && okEnds == streams;
    System.out.println("stream endings by status: " + endings);
    System.out.println(pass ? "PASS: no lease lost" : "FAIL: see the table");
    if (write != null) {
      KeepAliveDoc.write(write, new KeepAliveDoc.Run(streams, ttlMs, seconds, nodes, rate, warmupSeconds, redis,
          loadBefore, Machine.loadAverage(), table));
      System.out.println("wrote " + KeepAliveCharts.write(write));
    }
    return pass;
  }

  /** A copy of this command's settings for one point of an open-rate sweep. */
  KeepAliveLoad forRate(int openRate) {
    KeepAliveLoad point = new KeepAliveLoad();
    point.streams = streams;
    point.ttlMs = ttlMs;
    point.seconds = seconds;
    point.nodes = nodes;
    point.channels = channels;
    point.rate = openRate;
    point.warmupSeconds = warmupSeconds;
    point.serverJar = serverJar;
    point.resourcePrefix = "r" + openRate + "-load-";
    return point;
  }

  int streams() {
    return streams;
  }

  long ttlMs() {
    return ttlMs;
  }

  long seconds() {
    return seconds;
  }

  int nodes() {
    return nodes;
  }

  int warmupSeconds() {
    return warmupSeconds;
  }

  List<Integer> openRates() {
    return openRates;
  }

  Path write() {
    return write;
  }

  /**
   * One point of the sweep: a fresh server on {@code cluster}, the streams opened at this
   * command's rate (refusals retried after their pushback), held for the measured window, then
   * half-closed; what became of each stream.
   */
  OpenRateSweep.Row openRatePoint(DevCluster cluster, Path dir) throws Exception {
    String loadAtStart = Machine.loadAverage();
    gcLog = dir.resolve("server-gc-" + rate + ".log");
    try (ServerUnderTest server = ServerUnderTest.start(serverJar, jvmArgs(), serverFlags(cluster))) {
      List<ManagedChannel> pool = new ArrayList<>();
      for (int i = 0; i < channels; i++) {
        pool.add(Grpc.newChannelBuilder("127.0.0.1:" + server.port(), InsecureChannelCredentials.create()).build());
      }
      try {
        com.google.protobuf.Duration ttl = com.google.protobuf.Duration.newBuilder()
            .setSeconds(ttlMs / 1000).setNanos((int) (ttlMs % 1000) * 1_000_000).build();
        warmUp(pool, ttl);
        System.out.printf("open rate %,d/s: opening %,d streams (ttl %d ms)...%n", rate, streams, ttlMs);
        List<Holder> holders = new ArrayList<>(streams);
        long openStart = System.nanoTime();
        for (int i = 0; i < streams; i++) {
          pace(openStart, i);
          Holder h = new Holder(true);
          holders.add(h);
          acquireThenKeep(LockServiceGrpc.newStub(pool.get(i % pool.size())), h, AcquireRequest.newBuilder()
              .setResource(resourcePrefix + i).setTtl(ttl).setOwner("keepalive-load")
              .setToken(LockTokens.newToken()).build(), 0);
        }
        CompletableFuture.allOf(holders.stream().map(h -> h.first).toArray(CompletableFuture[]::new))
            .get(2 * OPEN_PATIENCE_NANOS, TimeUnit.NANOSECONDS);
        double openSeconds = (System.nanoTime() - openStart) / 1e9;
        String acquireTimes = percentiles(holders, h -> h.acquireAnswered - h.acquireSent);
        Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
        long closeStart = System.nanoTime();
        for (int i = 0; i < holders.size(); i++) {
          pace(closeStart, i);
          Holder h = holders.get(i);
          h.halfClose();
        }
        CompletableFuture.allOf(holders.stream().map(h -> h.end).toArray(CompletableFuture[]::new))
            .get(2, TimeUnit.MINUTES);
        int opened = 0;
        int lost = 0;
        int neverOpened = 0;
        int refusedStreams = 0;
        int lostUnanswered = 0;
        for (Holder h : holders) {
          if (h.granted && h.lostBeforeClose && !h.answered) {
            lostUnanswered++;
          }
          if (h.refused > 0) {
            refusedStreams++;
          }
          if (!h.granted) {
            neverOpened++;
          } else if (h.lostBeforeClose) {
            lost++;
          } else {
            opened++;
          }
        }
        OpenRateSweep.Row row = new OpenRateSweep.Row(rate, streams, opened, refusedStreams, refusals.get(), lost,
            neverOpened, acquireTimes, openSeconds, GcPauses.read(gcLog), loadAtStart);
        System.out.println("  " + row + "; lost without any answer on their stream: " + lostUnanswered
            + "; stream endings " + endings);
        return row;
      } finally {
        pool.forEach(ManagedChannel::shutdownNow);
      }
    }
  }

  /**
   * Acquire, then keep the lease alive. UNAVAILABLE means "retry the same call": with the
   * same client-chosen token a retry cannot take a second lock.
   */
  private void acquireThenKeep(LockServiceGrpc.LockServiceStub stub, Holder h, AcquireRequest request, int attempt) {
    h.acquireSent = System.nanoTime();
    if (h.firstSent == 0) {
      h.firstSent = h.acquireSent;
    }
    stub.acquire(request, new StreamObserver<>() {
      @Override
      public void onNext(AcquireResponse value) {
        h.acquireAnswered = System.nanoTime();
        Lease lease = value.getLease();
        h.validUntil = h.acquireSent + TimeUnit.SECONDS.toNanos(lease.getValidity().getSeconds())
            + lease.getValidity().getNanos();
        h.granted = true;
        h.stub = stub;
        h.keep = KeepAliveRequest.newBuilder()
            .setResource(lease.getResource()).setToken(lease.getToken()).setTtl(request.getTtl()).build();
        h.open();
      }

      @Override
      public void onError(Throwable t) {
        Status status = Status.fromThrowable(t);
        long pushbackMs = pushbackMillis(t);
        if (pushbackMs >= 0 && System.nanoTime() - h.firstSent < OPEN_PATIENCE_NANOS) {
          // Refused early by admission control: nothing was done; retry after the pushback, with jitter.
          refusedOnce(h);
          CompletableFuture.delayedExecutor(withJitter(pushbackMs), TimeUnit.MILLISECONDS)
              .execute(() -> acquireThenKeep(stub, h, request, attempt));
        } else if (pushbackMs < 0 && status.getCode() == Status.Code.UNAVAILABLE && attempt < 5) {
          if (h.counted) {
            acquireRetries.incrementAndGet();
          }
          CompletableFuture.delayedExecutor(50L << attempt, TimeUnit.MILLISECONDS)
              .execute(() -> acquireThenKeep(stub, h, request, attempt + 1));
        } else {
          h.finished(status);
        }
      }

      @Override
      public void onCompleted() {}
    });
  }

  /** A holder refused by the server's admission control keeps asking this long, then gives up (never opened). */
  private static final long OPEN_PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(60);

  private void refusedOnce(Holder h) {
    if (h.counted) {
      refusals.incrementAndGet();
      h.refused++;
    }
  }

  /** The {@code grpc-retry-pushback-ms} trailer of an UNAVAILABLE, or -1 when there is none. */
  static long pushbackMillis(Throwable t) {
    Status status = Status.fromThrowable(t);
    io.grpc.Metadata trailers = Status.trailersFromThrowable(t);
    if (status.getCode() != Status.Code.UNAVAILABLE || trailers == null) {
      return -1;
    }
    String value = trailers.get(PUSHBACK);
    try {
      return value == null ? -1 : Math.max(0, Long.parseLong(value.trim()));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  static final io.grpc.Metadata.Key<String> PUSHBACK =
      io.grpc.Metadata.Key.of("grpc-retry-pushback-ms", io.grpc.Metadata.ASCII_STRING_MARSHALLER);

  /** The pushback plus up to half of it again, at random: refused holders do not all come back at once. */
  static long withJitter(long pushbackMs) {
    return pushbackMs + (long) (java.util.concurrent.ThreadLocalRandom.current().nextDouble() * pushbackMs / 2);
  }

  /** -Dbench.serverJvm="-XX:StartFlightRecording=..." adds JVM flags to the server, e.g. to profile it. */
  /** -Dbench.serverFlags="--io-threads 1" adds server flags, e.g. to compare settings. */
  private List<String> serverFlags(DevCluster cluster) {
    List<String> flags = new ArrayList<>(
        List.of("--redis", String.join(",", cluster.uris()), "--max-streams", Integer.toString(streams * 2)));
    String extra = System.getProperty("bench.serverFlags", "").trim();
    if (!extra.isEmpty()) {
      flags.addAll(List.of(extra.split("\\s+")));
    }
    return flags;
  }

  List<String> jvmArgs() {
    List<String> args = new ArrayList<>(List.of("-Xmx1g"));
    if (gcLog != null) {
      args.add(GcPauses.flag(gcLog));
    }
    String extra = System.getProperty("bench.serverJvm", "").trim();
    if (!extra.isEmpty()) {
      args.addAll(List.of(extra.split("\\s+")));
    }
    return args;
  }

  /**
   * Runs the same calls on other resources first (acquire, keep alive until the first answer,
   * half-close), so that both JVMs have compiled their hot paths before the measured streams
   * open. A server that has just started spends much of a core on its JIT compiler; a
   * long-running one does not.
   */
  private void warmUp(List<ManagedChannel> pool, com.google.protobuf.Duration ttl) throws Exception {
    if (warmupSeconds <= 0) {
      return;
    }
    System.out.printf("warming up for %d s: short-lived streams on other resources, %d per second...%n",
        warmupSeconds, rate);
    List<Holder> warm = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; System.nanoTime() - start < TimeUnit.SECONDS.toNanos(warmupSeconds); i++) {
      pace(start, i);
      Holder h = new Holder(false);
      warm.add(h);
      acquireThenKeep(LockServiceGrpc.newStub(pool.get(i % pool.size())), h, AcquireRequest.newBuilder()
          .setResource("warmup-" + i).setTtl(ttl).setToken(LockTokens.newToken()).build(), 0);
      h.first.thenRun(() -> {
        h.halfClose();
      });
    }
    CompletableFuture.allOf(warm.stream().map(h -> h.end).toArray(CompletableFuture[]::new))
        .get(2, TimeUnit.MINUTES);
    Thread.sleep(ttlMs);
  }

  private static String percentiles(List<Holder> holders, java.util.function.ToLongFunction<Holder> nanos) {
    long[] ms = holders.stream().filter(h -> h.acquireAnswered != 0 && h.firstAnswered != 0)
        .mapToLong(nanos).map(n -> n / 1_000_000).sorted().toArray();
    if (ms.length == 0) {
      return "none";
    }
    return String.format(Locale.ROOT, "p50 %d ms, p90 %d ms, p99 %d ms, max %d ms (%d streams)", ms[ms.length / 2],
        ms[(int) (ms.length * 0.9)], ms[(int) (ms.length * 0.99)], ms[ms.length - 1], ms.length);
  }

  private void pace(long startNanos, int done) throws InterruptedException {
    long due = startNanos + (long) (done * 1e9 / rate);
    long early = due - System.nanoTime();
    if (early > 0) {
      TimeUnit.NANOSECONDS.sleep(early);
    }
  }
}
