package dev.redlockd.it.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM and SIGINT stop the server with exit code 0, once its graceful shutdown is done
 * (docs/operating.md, Signals). Before, the JVM's own handling made it 143, or 0 when main's
 * return won the race against the exit hook.
 */
class ExitCodeTest {

  @Test
  void sigtermAndSigintExitZeroAfterTheGracefulShutdown() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      CompletableFuture<ServerProcess> termed = CompletableFuture.supplyAsync(() ->
          ServerProcess.start("--redis", cluster.redisFlag()));
      // Once the first has made the new cluster: two at once could each find the other's half-made one.
      CompletableFuture<ServerProcess> interrupted = termed.thenApplyAsync(first ->
          ServerProcess.start("--redis", cluster.redisFlag()));
      CompletableFuture.allOf(termed, interrupted).exceptionally(e -> null).join();
      try (ServerProcess term = started(termed); ServerProcess interrupt = started(interrupted)) {
        CompletableFuture.allOf(termed, interrupted).join(); // one failed to start: the other is closed

        term.sigterm();
        kill("-INT", interrupt.pid());

        for (ServerProcess server : new ServerProcess[] {term, interrupt}) {
          assertThat(server.waitFor(Duration.ofSeconds(20))).as(server.log()).hasValue(0);
          assertThat(server.log()).contains("shutdown: ended 0 KeepAlive");
          assertThat(server.log().strip()).endsWith("redlockd stopped");
        }
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
