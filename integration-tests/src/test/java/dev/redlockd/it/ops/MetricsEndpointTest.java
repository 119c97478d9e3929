package dev.redlockd.it.ops;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Scrape;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The server process with --metrics-port, over three real Redis nodes: /metrics scraped over
 * HTTP while traffic runs, and the numbers move by what the traffic did.
 */
class MetricsEndpointTest {
  private static final String CALLS = "redlockd_rpc_calls_total";
  private static final Duration TTL = Duration.ofSeconds(30);

  private RedisCluster cluster;
  private ServerProcess server;
  private int metricsPort;
  private LockServiceGrpc.LockServiceBlockingStub blocking;
  private List<String> nodes;

  @BeforeEach
  void start() throws IOException {
    cluster = RedisCluster.start(3);
    metricsPort = freePort();
    // A roomy node timeout: on a busy test machine a healthy node may miss 50 ms, and this test
    // counts every failed node request.
    server = ServerProcess.start("--redis", cluster.redisFlag(), "--metrics-port", Integer.toString(metricsPort),
        "--node-timeout", "250ms");
    blocking = LockServiceGrpc.newBlockingStub(server.channel());
    nodes = cluster.uris().stream().map(uri -> uri.substring("redis://".length())).toList();
  }

  @AfterEach
  void stop() throws Exception {
    try {
      server.close();
    } finally {
      cluster.close();
    }
  }

  @Test
  void callCountsHistogramsAndGaugesFollowTheTraffic() throws Exception {
    assertThat(server.log()).contains("redlockd metrics on port " + metricsPort);
    Scrape before = scrape();

    for (int i = 0; i < 3; i++) {
      Lease lease = blocking.acquire(acquireRequest("metrics-ok-" + i, TTL, Duration.ZERO, "")).getLease();
      release(lease);
    }
    Lease held = blocking.acquire(acquireRequest("metrics-held", TTL, Duration.ZERO, "")).getLease();
    assertThat(codeOf(() -> blocking.acquire(acquireRequest("metrics-held", TTL, Duration.ZERO, ""))).getCode())
        .isEqualTo(Status.Code.ABORTED);
    assertThat(codeOf(() -> blocking.acquire(AcquireRequest.newBuilder().setTtl(
        dev.redlockd.it.support.LiveServer.proto(TTL)).build())).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);

    // A waiting Acquire shows in the gauge while it waits, and leaves it when the release hands the lock on.
    CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() ->
        blocking.acquire(acquireRequest("metrics-held", TTL, Duration.ofSeconds(30), "")).getLease());
    await().atMost(Duration.ofSeconds(10)).until(() -> scrape().value("redlockd_acquires_waiting") == 1);
    release(held);
    release(waiter.get(10, TimeUnit.SECONDS));
    await().atMost(Duration.ofSeconds(10)).until(() -> scrape().value("redlockd_acquires_waiting") == 0);

    // An open KeepAlive stream shows in the gauge; its half-close ends it OK.
    Lease kept = blocking.acquire(acquireRequest("metrics-kept", TTL, Duration.ZERO, "")).getLease();
    KeptStream stream = KeptStream.keep(LockServiceGrpc.newStub(server.channel()), "metrics-kept", kept.getToken(), TTL);
    assertThat(scrape().value("redlockd_keepalive_streams_open")).isEqualTo(1);
    stream.halfClose();
    assertThat(stream.awaitEnd(Duration.ofSeconds(10)).getCode()).isEqualTo(Status.Code.OK);

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      Scrape after = scrape();
      // 3 in the loop, the held one, the waiter, the kept one.
      assertThat(delta(before, after, CALLS, "method", "Acquire", "code", "OK")).isEqualTo(6);
      assertThat(delta(before, after, CALLS, "method", "Acquire", "code", "ABORTED")).isEqualTo(1);
      assertThat(delta(before, after, CALLS, "method", "Acquire", "code", "INVALID_ARGUMENT")).isEqualTo(1);
      assertThat(delta(before, after, CALLS, "method", "Release", "code", "OK")).isEqualTo(5);
      assertThat(delta(before, after, CALLS, "method", "KeepAlive", "code", "OK")).isEqualTo(1);
      assertThat(delta(before, after, CALLS)).isEqualTo(14);
      assertThat(delta(before, after, "redlockd_rpc_duration_seconds_count", "method", "Acquire")).isEqualTo(8);
      assertThat(delta(before, after, "redlockd_rpc_duration_seconds_count", "method", "Release")).isEqualTo(5);
      assertThat(after.value("redlockd_rpc_duration_seconds_count", "method", "KeepAlive")).isZero();
      assertThat(after.value("redlockd_keepalive_streams_open")).isZero();
    });

    Scrape after = scrape();
    for (String node : nodes) {
      // The 7 Acquire and 5 Release calls that passed validation each went to every node.
      assertThat(delta(before, after, "redlockd_node_request_duration_seconds_count", "node", node))
          .isGreaterThanOrEqualTo(12);
      // (A cold server's first connections may miss the node timeout; none failed since.)
      assertThat(delta(before, after, "redlockd_node_errors_total", "node", node)).isZero();
      assertThat(after.value("redlockd_node_up", "node", node)).isEqualTo(1);
    }
    assertThat(after.value("redlockd_nodes")).isEqualTo(3);
    assertThat(after.value("redlockd_nodes_up")).isEqualTo(3);
    assertThat(after.value("redlockd_nodes_quarantined")).isZero();
    assertThat(after.value("redlockd_quorum_margin")).isEqualTo(1);
  }

  @Test
  void aFrozenNodeCountsTimeoutsAndLeavesNodesUpUntilItAnswersAgain() throws Exception {
    String frozen = nodes.get(0);
    Scrape before = scrape();
    cluster.pause(0);
    try {
      for (int i = 0; i < 5; i++) {
        // Two of three nodes still make a quorum.
        release(blocking.acquire(acquireRequest("metrics-frozen-" + i, TTL, Duration.ZERO, "")).getLease());
      }
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        Scrape s = scrape();
        assertThat(delta(before, s, "redlockd_node_errors_total", "node", frozen, "reason", "timeout"))
            .isGreaterThanOrEqualTo(10);
        assertThat(s.value("redlockd_nodes_up")).isEqualTo(2);
        assertThat(s.value("redlockd_node_up", "node", frozen)).isZero();
        assertThat(s.value("redlockd_quorum_margin")).isZero();
      });
      Scrape during = scrape();
      for (String other : nodes.subList(1, 3)) {
        assertThat(delta(before, during, "redlockd_node_errors_total", "node", other)).isZero();
        assertThat(during.value("redlockd_node_up", "node", other)).isEqualTo(1);
      }
    } finally {
      cluster.resume(0);
    }
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      Scrape s = scrape();
      assertThat(s.value("redlockd_nodes_up")).isEqualTo(3);
      assertThat(s.value("redlockd_quorum_margin")).isEqualTo(1);
    });
  }

  private void release(Lease lease) {
    assertThat(blocking.release(ReleaseRequest.newBuilder()
        .setResource(lease.getResource()).setToken(lease.getToken()).build()).getReleased()).isTrue();
  }

  private Scrape scrape() {
    return Scrape.of(metricsPort);
  }

  private static double delta(Scrape before, Scrape after, String name, String... labels) {
    return after.value(name, labels) - before.value(name, labels);
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
