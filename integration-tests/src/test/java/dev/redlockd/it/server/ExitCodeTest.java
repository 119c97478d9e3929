package dev.redlockd.it.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM stops the server with exit code 0, once its graceful shutdown is done
 * (docs/operating.md, Signals). Before, the JVM's own handling made it 143, or 0 when main's
 * return won the race against the exit hook. (SIGINT, Ctrl-C, is DevModeTest's.)
 */
class ExitCodeTest {

  @Test
  void sigtermExitsZeroAfterTheGracefulShutdown() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag())) {
      server.sigterm();
      assertThat(server.waitFor(Duration.ofSeconds(20))).as(server.log()).hasValue(0);
      assertThat(server.log()).contains("shutdown: ended 0 KeepAlive");
      assertThat(server.log().strip()).endsWith("redlockd stopped");
    }
  }
}
