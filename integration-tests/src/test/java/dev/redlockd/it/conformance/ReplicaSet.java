package dev.redlockd.it.conformance;

import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
  private boolean closed; // guarded by this

  private ReplicaSet(String redisFlag, List<Integer> ports, List<ServerProcess> servers) {
    this.redisFlag = redisFlag;
    this.ports = ports;
    this.servers = servers;
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
   * A replica that starts light (the chaos run's JVM flags) and waits longer for a node: on the
   * suite's 2 cores, a replica starting up (its JIT compilers above all) starves the others' I/O
   * threads for a second, and these scenarios test restarts, not node timeouts (the conformance
   * server keeps the default).
   */
  private static ServerProcess startOn(int port, String redisFlag) {
    return ServerProcess.start(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"),
        List.of("--port", Integer.toString(port), "--redis", redisFlag, "--node-timeout", "250ms"), java.util.Map.of());
  }

  /** The replicas' addresses as a runner's --server takes them. */
  String addresses() {
    return ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
  }

  synchronized ServerProcess server(int i) {
    return servers.get(i);
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
    return CompletableFuture.runAsync(() -> {
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
