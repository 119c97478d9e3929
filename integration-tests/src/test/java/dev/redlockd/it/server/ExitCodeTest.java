package dev.redlockd.it.server;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM and SIGINT stop the server with exit code 0, once its graceful shutdown is done
 * (docs/operating.md, Signals). Before, the JVM's own handling made it 143 or 0, by a race
 * between the exit hook and main's return.
 */
class ExitCodeTest {

  @Test
  void sigtermAndSigintExitZeroAfterTheGracefulShutdown() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      CompletableFuture<ServerProcess> termed = CompletableFuture.supplyAsync(() ->
          ServerProcess.start("--redis", cluster.redisFlag(), "--shutdown-grace", "5s"));
      // Once the first has made the new cluster: two at once could each find the other's half-made one.
      CompletableFuture<ServerProcess> interrupted = termed.thenApplyAsync(first ->
          ServerProcess.start("--redis", cluster.redisFlag()));
      CompletableFuture.allOf(termed, interrupted).exceptionally(e -> null).join();
      try (ServerProcess term = started(termed); ServerProcess interrupt = started(interrupted)) {
        CompletableFuture.allOf(termed, interrupted).join(); // one failed to start: the other is closed
        // A kept lease: the shutdown has a stream to end, so it is not over the moment it starts.
        Lease lease = LockServiceGrpc.newBlockingStub(term.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
            .acquire(acquireRequest("exit-code", Duration.ofSeconds(30), Duration.ZERO, "")).getLease();
        CompletableFuture<KeepAliveResponse> renewed = new CompletableFuture<>();
        LockServiceGrpc.newStub(term.channel()).keepAlive(new StreamObserver<>() {
          @Override
          public void onNext(KeepAliveResponse response) {
            renewed.complete(response);
          }

          @Override
          public void onError(Throwable t) {
            renewed.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {}
        }).onNext(KeepAliveRequest.newBuilder().setResource("exit-code").setToken(lease.getToken())
            .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(30)).build());
        renewed.get(10, TimeUnit.SECONDS);

        term.sigterm();
        kill("-INT", interrupt.pid());

        assertThat(term.waitFor(Duration.ofSeconds(20))).as(term.log()).hasValue(0);
        assertThat(term.log()).contains("shutdown: ended 1 KeepAlive").contains("redlockd stopped");
        assertThat(interrupt.waitFor(Duration.ofSeconds(20))).as(interrupt.log()).hasValue(0);
        assertThat(interrupt.log().strip()).endsWith("redlockd stopped");
      }
    }
  }

  private static ServerProcess started(CompletableFuture<ServerProcess> start) {
    return start.isCompletedExceptionally() ? null : start.join();
  }

  private static void kill(String signal, long pid) throws Exception {
    Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).isZero();
  }
}
