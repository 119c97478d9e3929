package dev.redlockd.it.server;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import dev.redlockd.testing.UntilAvailable;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A cold server over healthy nodes says nothing alarming about them: its first contact with a
 * node may take longer than the node timeout without the node being called down.
 */
class QuietStartTest {

  private static void assertQuietAboutHealthyNodes(ServerProcess server) {
    LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(server.channel());
    // Retried as a client retries it: the claim is what the log says, not the first call's fate.
    Lease lease = UntilAvailable.call(Duration.ofSeconds(10),
        () -> stub.acquire(acquireRequest("quiet-start", Duration.ofSeconds(10), Duration.ZERO, ""))).getLease();
    stub.release(ReleaseRequest.newBuilder().setResource("quiet-start").setToken(lease.getToken()).build());
    String log = server.log();
    assertThat(log).contains("Quorum available: 3 of 3")
        .doesNotContain("does not answer")
        .doesNotContain(" is down")
        .doesNotContain("have not answered yet");
  }

  @Test
  void devModeStartsWithoutCallingItsOwnNodesSilent() throws Exception {
    try (ServerProcess server = ServerProcess.start("--dev")) {
      assertThat(server.log()).contains("DEV MODE");
      assertQuietAboutHealthyNodes(server);
    }
  }

  @Test
  void aStartOverThreeHealthyNodesCallsNoneOfThemSilent() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag())) {
      assertQuietAboutHealthyNodes(server);
    }
  }
}
