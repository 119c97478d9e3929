package dev.redlockd.it.conformance;

import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Server replicas over the same Redis nodes, each on a port of its own that it keeps across
 * restarts, so that a client given their addresses finds each again after it came back. A
 * replica is stopped as an operator or a crash would (SIGTERM, SIGKILL) and started again,
 * while the others serve.
 */
final class ReplicaSet implements AutoCloseable {
  private final String redisFlag;
  private final List<Integer> ports;
  private final List<ServerProcess> servers;
  /** Each replica's last restart, done once it listens again; guarded by this. */
  private final List<CompletableFuture<Void>> restarts = new ArrayList<>();
  private boolean closed; // guarded by this

  private ReplicaSet(String redisFlag, List<Integer> ports, List<ServerProcess> servers) {
    this.redisFlag = redisFlag;
    this.ports = ports;
    this.servers = servers;
    servers.forEach(s -> restarts.add(CompletableFuture.completedFuture(null)));
  }

  /** {@code count} replicas, started side by side. */
  static ReplicaSet start(int count, String redisFlag) throws IOException {
    List<Integer> ports = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      try (ServerSocket socket = new ServerSocket(0)) {
        ports.add(socket.getLocalPort());
      }
    }
    List<CompletableFuture<ServerProcess>> starting = ports.stream()
        .map(port -> CompletableFuture.supplyAsync(() -> startOn(port, redisFlag))).toList();
    List<ServerProcess> servers = new ArrayList<>();
    RuntimeException failed = null;
    for (CompletableFuture<ServerProcess> s : starting) {
      try {
        servers.add(s.join());
      } catch (RuntimeException e) {
        failed = e;
      }
    }
    ReplicaSet set = new ReplicaSet(redisFlag, ports, servers);
    if (failed != null) {
      set.close();
      throw failed;
    }
    return set;
  }

  /**
   * A replica that starts light ({@link ServerProcess#LIGHT_JVM}, as every test server) and waits
   * longer for a node: on the suite's 2 cores, a replica starting up starves the others' I/O
   * threads for a while, and these scenarios test restarts, not node timeouts (the conformance
   * server keeps the default).
   */
  private static ServerProcess startOn(int port, String redisFlag) {
    return ServerProcess.start("--port", Integer.toString(port), "--redis", redisFlag, "--node-timeout", "250ms");
  }

  /** The replicas' addresses as a runner's --server takes them. */
  String addresses() {
    return ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
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

  /** Returns once every restart begun so far is done: every replica listens. */
  void awaitServing() throws Exception {
    List<CompletableFuture<Void>> pending;
    synchronized (this) {
      pending = List.copyOf(restarts);
    }
    for (CompletableFuture<Void> restart : pending) {
      restart.get(60, TimeUnit.SECONDS);
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
        old.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      ServerProcess again = startOn(ports.get(i), redisFlag);
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

  /** Every replica's log, for a failure report. */
  synchronized String logs() {
    StringBuilder all = new StringBuilder();
    for (int i = 0; i < servers.size(); i++) {
      all.append("== replica ").append(i).append('\n').append(servers.get(i).log()).append('\n');
    }
    return all.toString();
  }

  @Override
  public synchronized void close() {
    closed = true;
    servers.forEach(ReplicaSet::closeQuietly);
  }

  private static void closeQuietly(ServerProcess server) {
    try {
      server.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
