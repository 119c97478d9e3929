package dev.redlockd.it.startup;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Scrape;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Signals sent to the server process: SIGHUP never stops it; SIGTERM says what it ended. */
class SignalsTest {
  /**
   * The wait of an Acquire of a free resource: granted by the first round, unless a busy machine
   * made a quorum of nodes miss the 50 ms node timeout; then the server tries again. These
   * tests are about signals, not node timeouts.
   */
  private static final Duration FREE = Duration.ofSeconds(10);
  /**
   * How long a call may take, connection included: what these tests check is that the server
   * answers at all after a signal, not how fast (on a busy machine a first connection to a
   * server just started took over 5 s).
   */
  private static final Duration CALL = Duration.ofSeconds(30);
  private static RedisCluster cluster;

  @BeforeAll
  static void startRedis() {
    cluster = RedisCluster.start(3);
  }

  @AfterAll
  static void stopRedis() {
    cluster.close();
  }

  private static void hangup(ServerProcess server) throws Exception {
    Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(server.pid())).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).isZero();
  }

  @Test
  void sighupWithoutAPolicySaysThereIsNothingToReloadAndKeepsServing() throws Exception {
    try (ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag())) {
      // Started with SIGHUP's default disposition, as ServerProcess starts every server, even
      // when this run was started under nohup.
      assertThat(server.log()).doesNotContain("SIGHUP is ignored");
      hangup(server);
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
          assertThat(server.log()).contains("SIGHUP: nothing to reload (no --policy); still running"));
      // Before: the JVM's default action ran the shutdown hooks and the process exited 129.
      assertThat(server.waitFor(Duration.ofMillis(500))).as(server.log()).isEmpty();
      assertThat(HealthGrpc.newBlockingStub(server.channel()).withDeadlineAfter(CALL.toSeconds(), TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
      LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(server.channel())
          .withDeadlineAfter(CALL.toSeconds(), TimeUnit.SECONDS);
      Lease lease = stub.acquire(acquireRequest("after-hup", Duration.ofSeconds(10), FREE, "")).getLease();
      assertThat(stub.release(ReleaseRequest.newBuilder().setResource("after-hup").setToken(lease.getToken())
          .build()).getReleased()).isTrue();

      server.sigterm();
      assertThat(server.waitFor(Duration.ofSeconds(15))).as(server.log()).isPresent();
      assertThat(server.log().strip()).endsWith("redlockd stopped");
    }
  }

  /**
   * Under nohup (or any parent that ignores SIGHUP) the JVM cannot take the signal over and says
   * nothing of it: the server says so at start-up, in one line, and the signal changes nothing.
   */
  @Test
  void aServerStartedWithSighupIgnoredSaysSoInOneLine() throws Exception {
    try (ServerProcess server = ServerProcess.startWithHangupIgnored("--redis", cluster.redisFlag())) {
      String ignored = "SIGHUP is ignored in this process (started under nohup?); there is no --policy to reload";
      assertThat(server.log()).contains(ignored);
      assertThat(server.log().split(java.util.regex.Pattern.quote("SIGHUP is ignored"), -1)).hasSize(2);
      hangup(server);
      assertThat(HealthGrpc.newBlockingStub(server.channel()).withDeadlineAfter(CALL.toSeconds(), TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
      assertThat(server.log()).doesNotContain("SIGHUP: nothing to reload");
    }
  }

  @Test
  void sigtermLogsTheStreamsItEndedAndThatCallsFinishedWithinTheGrace() throws Exception {
    try (ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag(), "--shutdown-grace", "5s")) {
      Lease held = LockServiceGrpc.newBlockingStub(server.channel())
          .acquire(acquireRequest("kept", Duration.ofSeconds(30), FREE, "")).getLease();
      CompletableFuture<Object> kept = new CompletableFuture<>();
      StreamObserver<KeepAliveRequest> requests = LockServiceGrpc.newStub(server.channel())
          .keepAlive(new Recorder<KeepAliveResponse>(kept));
      requests.onNext(KeepAliveRequest.newBuilder().setResource("kept").setToken(held.getToken())
          .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(30)).build());
      CompletableFuture<Object> observed = new CompletableFuture<>();
      ElectionServiceGrpc.newStub(server.channel()).observe(ObserveRequest.newBuilder().setElection("e").build(),
          new Recorder<ObserveResponse>(observed));
      kept.get(10, TimeUnit.SECONDS);
      observed.get(10, TimeUnit.SECONDS);

      server.sigterm();

      assertThat(server.waitFor(Duration.ofSeconds(15))).as(server.log()).isPresent();
      assertThat(server.log()).contains("shutdown: ended 1 KeepAlive, 0 Campaign, 1 Observe streams with "
          + "UNAVAILABLE, releasing nothing they held; calls under way finished within the 5s grace period");
      assertThat(cluster.lockHolder(0, "redlock:{kept}:lock")).isEqualTo(held.getToken());
    }
  }

  @Test
  void sigtermLogsThatCallsWereCutOffWhenTheGraceRanOut() throws Exception {
    int metricsPort;
    try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
      metricsPort = probe.getLocalPort();
    }
    try (ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag(), "--shutdown-grace", "1s",
        "--metrics-port", Integer.toString(metricsPort))) {
      LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(server.channel());
      stub.acquire(acquireRequest("busy", Duration.ofSeconds(30), FREE, "")).getLease();
      // Waits for the held lock far longer than the grace period.
      CompletableFuture<Status> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          stub.acquire(acquireRequest("busy", Duration.ofSeconds(30), Duration.ofSeconds(60), ""));
          return Status.OK;
        } catch (StatusRuntimeException e) {
          return e.getStatus();
        }
      });
      await().atMost(Duration.ofSeconds(10))
          .until(() -> Scrape.of(metricsPort).value("redlockd_acquires_waiting") == 1);

      server.sigterm();

      assertThat(waiting.get(15, TimeUnit.SECONDS).getCode()).isNotEqualTo(Status.Code.OK);
      assertThat(server.waitFor(Duration.ofSeconds(15))).as(server.log()).isPresent();
      assertThat(server.log()).contains("shutdown: ended 0 KeepAlive, 0 Campaign, 0 Observe streams with "
          + "UNAVAILABLE, releasing nothing they held; calls still under way were cut off when the 1s grace "
          + "period ran out");
    }
  }

  /** Completes {@code first} at the first message, or with the status the stream ended with. */
  private record Recorder<T>(CompletableFuture<Object> first) implements StreamObserver<T> {
    @Override
    public void onNext(T value) {
      first.complete(value);
    }

    @Override
    public void onError(Throwable t) {
      first.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      first.complete(Status.OK);
    }
  }
}
