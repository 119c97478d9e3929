package dev.redlockd.it.conformance;

import dev.redlockd.it.support.BlackholeProxy;
import dev.redlockd.it.support.FreePort;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Server replicas over the same Redis nodes, each on a port of its own that it keeps across
 * restarts, so that a client given their addresses finds each again after it came back. A
 * replica is stopped as an operator or a crash would (SIGTERM, SIGKILL) and started again,
 * while the others serve; or it goes silent: frozen (SIGSTOP), cut off from its clients by a
 * {@link BlackholeProxy} in front of it ({@link #fronted}), or cut off from a majority of the
 * nodes by proxies between it and them ({@link #linkedThroughProxies}).
 */
final class ReplicaSet implements AutoCloseable {
  /** Each replica's --node-timeout: see {@link #startOn}. */
  static final Duration NODE_TIMEOUT = Duration.ofMillis(250);
  /** An answer this quick shows a replica running warm code with CPU to spare ({@link #awaitPrompt}). */
  static final Duration PROMPT = Duration.ofMillis(200);
  /** How long a replica that listens may take to answer promptly. */
  static final Duration PROMPT_WAIT = Duration.ofSeconds(30);
  private final List<String> redisFlags;
  /** Flags every replica gets besides its ports and nodes, at every start. */
  private final List<String> serverFlags;
  private final List<Integer> ports;
  private final List<Integer> metricsPorts;
  private final List<ServerProcess> servers;
  /** Logs of replicas stopped by {@link #restart}, in the order they stopped. */
  private final List<String> pastLogs = new ArrayList<>();
  /** The proxies clients reach the replicas through, by replica; empty when they reach them directly. */
  private final List<BlackholeProxy> fronts;
  /** By replica, the proxies between it and the nodes it can be cut off from; empty lists when none. */
  private final List<List<BlackholeProxy>> nodeLinks;
  /** Each replica's last restart, done once it listens again; guarded by this. */
  private final List<CompletableFuture<Void>> restarts = new ArrayList<>();
  private boolean closed; // guarded by this

  private ReplicaSet(List<String> redisFlags, List<String> serverFlags, List<Integer> ports,
      List<Integer> metricsPorts, List<ServerProcess> servers, List<BlackholeProxy> fronts,
      List<List<BlackholeProxy>> nodeLinks) {
    this.redisFlags = redisFlags;
    this.serverFlags = serverFlags;
    this.ports = ports;
    this.metricsPorts = metricsPorts;
    this.servers = servers;
    this.fronts = fronts;
    this.nodeLinks = nodeLinks;
    servers.forEach(s -> restarts.add(CompletableFuture.completedFuture(null)));
  }

  /** {@code count} replicas, started side by side. */
  static ReplicaSet start(int count, String redisFlag) throws IOException {
    return start(count, redisFlag, List.of());
  }

  /** {@code count} replicas, started side by side, each with {@code serverFlags} too (at every restart). */
  static ReplicaSet start(int count, String redisFlag, List<String> serverFlags) throws IOException {
    return start(Collections.nCopies(count, redisFlag), serverFlags, false, List.of());
  }

  /** {@code count} replicas, each behind a proxy of its own: {@link #addresses()} names the proxies. */
  static ReplicaSet fronted(int count, String redisFlag) throws IOException {
    return start(Collections.nCopies(count, redisFlag), List.of(), true, List.of());
  }

  /**
   * {@code count} replicas, each reaching the first {@code cuttable} of the cluster's nodes through
   * proxies of its own (which {@link #cutFromNodes} blackholes) and the others directly.
   */
  static ReplicaSet linkedThroughProxies(int count, RedisCluster cluster, int cuttable) throws IOException {
    List<String> flags = new ArrayList<>();
    List<List<BlackholeProxy>> links = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        List<BlackholeProxy> mine = new ArrayList<>();
        links.add(mine);
        List<String> uris = new ArrayList<>();
        for (int node = 0; node < cluster.size(); node++) {
          int port = cluster.node(node).port();
          if (node < cuttable) {
            BlackholeProxy proxy = new BlackholeProxy(port);
            mine.add(proxy);
            port = proxy.port();
          }
          uris.add("redis://127.0.0.1:" + port);
        }
        flags.add(String.join(",", uris));
      }
    } catch (IOException | RuntimeException e) {
      links.forEach(ReplicaSet::closeQuietly);
      throw e;
    }
    return start(flags, List.of(), false, links);
  }

  private static ReplicaSet start(List<String> redisFlags, List<String> serverFlags, boolean fronted,
      List<List<BlackholeProxy>> nodeLinks) throws IOException {
    List<Integer> ports = new ArrayList<>();
    List<Integer> metricsPorts = new ArrayList<>();
    for (int i = 0; i < redisFlags.size(); i++) {
      try (ServerSocket socket = new ServerSocket(0)) {
        ports.add(socket.getLocalPort());
      }
      metricsPorts.add(FreePort.pick());
    }
    List<CompletableFuture<ServerProcess>> starting = new ArrayList<>();
    for (int i = 0; i < redisFlags.size(); i++) {
      int port = ports.get(i);
      int metricsPort = metricsPorts.get(i);
      String redisFlag = redisFlags.get(i);
      starting.add(CompletableFuture.supplyAsync(() -> startOn(port, metricsPort, redisFlag, serverFlags)));
    }
    List<ServerProcess> servers = new ArrayList<>();
    RuntimeException failed = null;
    for (CompletableFuture<ServerProcess> s : starting) {
      try {
        servers.add(s.join());
      } catch (RuntimeException e) {
        failed = e;
      }
    }
    List<BlackholeProxy> fronts = new ArrayList<>();
    ReplicaSet set = new ReplicaSet(redisFlags, serverFlags, ports, metricsPorts, servers, fronts,
        nodeLinks.isEmpty() ? Collections.nCopies(redisFlags.size(), List.of()) : nodeLinks);
    if (failed == null && fronted) {
      try {
        for (int port : ports) {
          fronts.add(new BlackholeProxy(port));
        }
      } catch (IOException e) {
        set.close();
        throw e;
      }
    }
    if (failed != null) {
      set.close();
      throw failed;
    }
    try {
      for (int i = 0; i < set.size(); i++) {
        set.awaitPrompt(i, PROMPT_WAIT);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      set.close();
      throw new IllegalStateException(e);
    } catch (AssertionError e) {
      set.close();
      throw e;
    }
    return set;
  }

  /**
   * Returns once replica {@code i} answers a Describe within {@link #PROMPT}, and how long that
   * took. A replica listens before it is warm: on the suite's 2 cores, with modules building and
   * simulating beside it, a replica's JVM took up to 4 s from start to listening, and fresh-clone
   * runs lost leases of ttl 2-3 s that the first renewals through a replica listening for under a
   * second did not reach in time (a first KeepAlive answer that never came in 1.3 s; ten kept
   * streams moved to a replica listening for 0.6 s). The scenarios claim continuity through
   * restarts and shutdowns, not through a cold JVM's first seconds; stopping the next replica as
   * soon as one listens is rolling-restart-fast's claim, which does not wait for this.
   */
  long awaitPrompt(int i, Duration within) throws InterruptedException {
    long start = System.nanoTime();
    DescribeRequest describe = DescribeRequest.newBuilder().setResource("conformance/prompt").build();
    while (true) {
      LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(server(i).channel())
          .withDeadlineAfter(5, TimeUnit.SECONDS);
      long sent = System.nanoTime();
      try {
        stub.describe(describe);
        if (System.nanoTime() - sent <= PROMPT.toNanos()) {
          return System.nanoTime() - start;
        }
      } catch (StatusRuntimeException notYet) {
        // still starting, or slower than the deadline: asked again below
      }
      if (System.nanoTime() - start > within.toNanos()) {
        throw new AssertionError("replica " + i + " did not answer a Describe within " + PROMPT.toMillis()
            + " ms in the " + within.toSeconds() + " s after it listened");
      }
      Thread.sleep(50);
    }
  }

  /**
   * A replica that starts light ({@link ServerProcess#LIGHT_JVM}, as every test server) and waits
   * longer for a node: on the suite's 2 cores, a replica starting up starves the others' I/O
   * threads for a while, and these scenarios test restarts, not node timeouts (the conformance
   * server keeps the default).
   */
  private static ServerProcess startOn(int port, int metricsPort, String redisFlag, List<String> serverFlags) {
    List<String> flags = new ArrayList<>(List.of("--port", Integer.toString(port), "--redis", redisFlag,
        "--node-timeout", NODE_TIMEOUT.toMillis() + "ms", "--metrics-port", Integer.toString(metricsPort)));
    flags.addAll(serverFlags);
    return ServerProcess.start(flags.toArray(String[]::new));
  }

  /** The replicas' addresses as a runner's --server takes them (their proxies', when fronted). */
  String addresses() {
    return clientPorts().stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
  }

  /** The port a client reaches replica {@code i} on: its own, or its proxy's when fronted. */
  int clientPort(int i) {
    return fronts.isEmpty() ? ports.get(i) : fronts.get(i).port();
  }

  private List<Integer> clientPorts() {
    return IntStream.range(0, ports.size()).mapToObj(this::clientPort).toList();
  }

  /** Replica {@code i}'s metrics port, the same across its restarts. */
  int metricsPort(int i) {
    return metricsPorts.get(i);
  }

  /** Replica {@code i}'s clients' bytes are dropped from now on, both ways; nothing is closed. */
  void blackholeFront(int i) {
    fronts.get(i).blackhole();
  }

  /** Ends {@link #blackholeFront}: the connections it cut are closed, new ones forwarded. */
  void restoreFront(int i) throws IOException {
    fronts.get(i).restore();
  }

  /** Replica {@code i} reaches only the nodes it has no proxy to from now on; nothing is closed. */
  void cutFromNodes(int i) {
    nodeLinks.get(i).forEach(BlackholeProxy::blackhole);
  }

  /** Ends {@link #cutFromNodes}: the connections it cut are closed, and the replica connects again. */
  void restoreLinks(int i) throws IOException {
    for (BlackholeProxy link : nodeLinks.get(i)) {
      link.restore();
    }
  }

  synchronized ServerProcess server(int i) {
    return servers.get(i);
  }

  int size() {
    return ports.size();
  }

  /** Replica {@code i}'s port, the same across its restarts. */
  int port(int i) {
    return ports.get(i);
  }

  /** Returns once every restart begun so far is done and every replica answers promptly ({@link #awaitPrompt}). */
  void awaitServing() throws Exception {
    List<CompletableFuture<Void>> pending;
    synchronized (this) {
      pending = List.copyOf(restarts);
    }
    for (CompletableFuture<Void> restart : pending) {
      restart.get(60, TimeUnit.SECONDS);
    }
    for (int i = 0; i < size(); i++) {
      awaitPrompt(i, PROMPT_WAIT);
    }
  }

  /**
   * Stops replica {@code i} with SIGTERM ({@code kill} false) or SIGKILL, waits for it to exit,
   * and starts it again on its port; completes once it listens again.
   */
  CompletableFuture<Void> restart(int i, boolean kill) {
    ServerProcess old = server(i);
    if (kill) {
      old.kill();
    } else {
      old.sigterm();
    }
    CompletableFuture<Void> restart = CompletableFuture.runAsync(() -> {
      try {
        if (old.waitFor(Duration.ofSeconds(20)).isEmpty()) {
          throw new AssertionError("replica " + i + " still running 20 s after its signal:\n" + old.log());
        }
        keepLog(i, old);
        old.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      ServerProcess again = startOn(ports.get(i), metricsPorts.get(i), redisFlags.get(i), serverFlags);
      boolean late;
      synchronized (this) {
        late = closed;
        servers.set(i, again);
      }
      if (late) {
        // The set was closed while this replica was starting (a scenario that failed
        // mid-restart): stop it too, so that no server outlives the test.
        closeQuietly(again);
      }
    });
    synchronized (this) {
      restarts.set(i, restart);
    }
    return restart;
  }

  /** The logs of replicas' earlier runs, stopped by a restart: a stream's end there explains a client's loss. */
  private synchronized void keepLog(int i, ServerProcess stopped) {
    pastLogs.add("== replica " + i + ", until its restart\n" + stopped.log() + "\n");
  }

  /** Every replica's log, earlier runs (before each restart) first, for a failure report. */
  synchronized String logs() {
    StringBuilder all = new StringBuilder();
    pastLogs.forEach(all::append);
    for (int i = 0; i < servers.size(); i++) {
      all.append("== replica ").append(i).append('\n').append(servers.get(i).log()).append('\n');
    }
    return all.toString();
  }

  @Override
  public synchronized void close() {
    closed = true;
    servers.forEach(ReplicaSet::closeQuietly);
    fronts.forEach(ReplicaSet::closeQuietly);
    nodeLinks.forEach(ReplicaSet::closeQuietly);
  }

  private static void closeQuietly(List<BlackholeProxy> proxies) {
    proxies.forEach(ReplicaSet::closeQuietly);
  }

  private static void closeQuietly(BlackholeProxy proxy) {
    try {
      proxy.close();
    } catch (IOException e) {
      // its sockets are closed as far as they can be
    }
  }

  private static void closeQuietly(ServerProcess server) {
    try {
      server.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
