package dev.redlockd.it.server;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The server as users run it: SIGTERM, and flags that stop start-up. */
class ShutdownAndFlagsTest {

  @Test
  void sigtermAnswersCallsUnderWayAndExitsWithinTheGrace() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag(), "--shutdown-grace", "2s")) {
      LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(server.channel());
      Lease held = stub.acquire(acquireRequest("shutdown", Duration.ofSeconds(30), Duration.ZERO, "")).getLease();
      CompletableFuture<Status> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          stub.acquire(acquireRequest("shutdown", Duration.ofSeconds(30), Duration.ofSeconds(30), ""));
          return Status.OK;
        } catch (StatusRuntimeException e) {
          return e.getStatus();
        }
      });
      List<ServingStatus> watched = new CopyOnWriteArrayList<>();
      HealthGrpc.newStub(server.channel()).watch(HealthCheckRequest.getDefaultInstance(), new StreamObserver<>() {
        @Override
        public void onNext(HealthCheckResponse value) {
          watched.add(value.getStatus());
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
      });
      Thread.sleep(300);
      assertThat(watched).containsExactly(ServingStatus.SERVING);
      long start = System.nanoTime();
      server.sigterm();
      // The waiting call is answered (not left hanging) and the process is gone within the grace.
      Status status = waiting.get(4, TimeUnit.SECONDS);
      assertThat(status.getCode()).isIn(Status.Code.UNAVAILABLE, Status.Code.CANCELLED);
      assertThat(server.waitFor(Duration.ofSeconds(10))).as(server.log()).isPresent();
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(6000);
      assertThat(server.log().strip()).endsWith("redlockd stopped");
      // Health watchers heard it first.
      assertThat(watched).last().isEqualTo(ServingStatus.NOT_SERVING);
      // The Redis nodes are not the server's to stop, and the held lease is still there.
      assertThat(cluster.lockHolder(0, "redlock:{shutdown}:lock")).isEqualTo(held.getToken());
    }
  }

  @Test
  void sigtermInDevModeEndsKeptStreamsUnreleasedBeforeItStopsItsRedisNodes() throws Exception {
    try (ServerProcess server = ServerProcess.start("--dev")) {
      LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(server.channel());
      Duration ttl = Duration.ofSeconds(30);
      Lease held = stub.acquire(acquireRequest("dev-shutdown", ttl, Duration.ZERO, "")).getLease();
      CompletableFuture<KeepAliveResponse> first = new CompletableFuture<>();
      CompletableFuture<Status> ended = new CompletableFuture<>();
      StreamObserver<KeepAliveRequest> requests = LockServiceGrpc.newStub(server.channel())
          .keepAlive(new StreamObserver<>() {
            @Override
            public void onNext(KeepAliveResponse value) {
              first.complete(value);
            }

            @Override
            public void onError(Throwable t) {
              ended.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
              ended.complete(Status.OK);
            }
          });
      requests.onNext(KeepAliveRequest.newBuilder().setResource("dev-shutdown").setToken(held.getToken())
          .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(ttl.getSeconds())).build());
      first.get(5, TimeUnit.SECONDS);
      long start = System.nanoTime();

      server.sigterm();

      assertThat(ended.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(server.waitFor(Duration.ofSeconds(15))).as(server.log()).isPresent();
      // Ended without a release (nothing to retry against nodes that are going away), then the nodes stop.
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as(server.log()).isLessThan(5000);
      String log = server.log();
      assertThat(log.substring(log.indexOf("shutting down"))).as(log)
          .contains("redlockd stopped").doesNotContain("does not answer");
    }
  }

  private static String[] run(Map<String, String> env, String... flags) throws IOException, InterruptedException {
    ProcessBuilder builder = new ProcessBuilder(ServerProcess.command(List.of(), List.of(flags)))
        .redirectErrorStream(true);
    builder.environment().putAll(env);
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return new String[] {Integer.toString(p.exitValue()), out};
  }

  @Test
  void badFlagsStopStartUpWithAOneLineReason() throws Exception {
    String[][] cases = {
        run(Map.of(), "--max-ttl", "banana"),
        run(Map.of(), "--drift-factor", "0.9"),
        run(Map.of("REDLOCKD_MAX_TTL", "banana")),
        run(Map.of(), "--redis", "http://example:1"),
        run(Map.of(), "--no-such-flag"),
        run(Map.of(), "--release-on-disconnect"),
        run(Map.of("REDLOCKD_RELEASE_ON_DISCONNECT", "true")),
    };
    for (String[] result : cases) {
      assertThat(result[0]).as(result[1]).isEqualTo("2");
      assertThat(result[1].strip()).startsWith("redlockd: ").doesNotContain("\n").doesNotContain("Exception");
    }
    assertThat(cases[0][1]).contains("max-ttl").contains("banana");
    assertThat(cases[2][1]).contains("banana");
    // Removed, not ignored: a deployment that relied on it learns why at start-up.
    assertThat(cases[5][1]).contains("--release-on-disconnect", "was removed");
    assertThat(cases[6][1]).contains("REDLOCKD_RELEASE_ON_DISCONNECT", "was removed");
  }

  @Test
  void aFlagOnTheCommandLineWinsOverItsEnvironmentVariable() throws Exception {
    // The bad environment value is overridden, so the one error left is the drift factor.
    String[] result = run(Map.of("REDLOCKD_MAX_TTL", "banana"), "--max-ttl", "1h", "--drift-factor", "0.9");
    assertThat(result[0]).isEqualTo("2");
    assertThat(result[1]).contains("drift-factor").doesNotContain("banana");
  }

  @Test
  void helpListsTheFlagsAndExitsZero() throws Exception {
    String[] result = run(Map.of(), "--help");
    assertThat(result[0]).isEqualTo("0");
    assertThat(result[1]).contains("--redis", "--max-ttl", "--node-timeout").doesNotContain("--release-on-disconnect");
  }
}
