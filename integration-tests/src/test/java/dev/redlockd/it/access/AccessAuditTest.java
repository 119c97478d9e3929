package dev.redlockd.it.access;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Scrape;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The audit lines and the denial counter of a real server process, read from its log and its /metrics. */
class AccessAuditTest {
  private static final String POLICY = """
      {"version": 1, "identities": [
        {"identity": "team-a", "lock": ["a/"], "describe": ["a/"]},
        {"identity": "ops", "describe": [""], "force_release": [""]}
      ]}
      """;

  @TempDir
  Path dir;

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static List<String> lines(ServerProcess server, String containing) {
    return server.log().lines().filter(l -> l.contains(containing)).toList();
  }

  @Test
  void eachDenialAndEachForceReleaseIsOneLineAndDenialsAreCountedByIdentityAndRpc() throws Exception {
    Tenant teamA = Tenant.named("team-a");
    Tenant ops = Tenant.named("ops");
    Path policy = Files.writeString(dir.resolve("policy.json"), POLICY);
    Path tokens = Files.writeString(dir.resolve("tokens"), teamA.tokenLine() + "\n" + ops.tokenLine() + "\n");
    int metricsPort = freePort();
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", "250ms",
            "--bind", "127.0.0.1", "--policy", policy.toString(), "--tokens", tokens.toString(),
            "--allow-force-release", "--metrics-port", Integer.toString(metricsPort))) {
      LockServiceGrpc.LockServiceBlockingStub a = teamA.locks(server.channel());
      for (int i = 0; i < 3; i++) {
        assertThat(codeOf(() -> a.acquire(acquireRequest("b/audited", Duration.ofSeconds(5), Duration.ZERO, "")))
            .getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
      }
      assertThat(codeOf(() -> a.forceRelease(ForceReleaseRequest.newBuilder().setResource("a/forced").build()))
          .getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
      LockServiceGrpc.LockServiceBlockingStub anonymous = LockServiceGrpc.newBlockingStub(server.channel())
          .withDeadlineAfter(10, TimeUnit.SECONDS);
      assertThat(codeOf(() -> anonymous.describe(DescribeRequest.newBuilder().setResource("a/x").build()))
          .getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
      a.acquire(acquireRequest("a/forced", Duration.ofSeconds(30), Duration.ZERO, ""));
      assertThat(ops.locks(server.channel()).forceRelease(ForceReleaseRequest.newBuilder().setResource("a/forced")
          .build()).getReleased()).isTrue();

      List<String> denied = lines(server, "denied Acquire of resource 'b/audited' to identity 'team-a' from /127.0.0.1:");
      assertThat(denied).hasSize(3).allSatisfy(l -> assertThat(l).contains("WARN", "no lock grant covers it"));
      assertThat(lines(server, "denied ForceRelease of resource 'a/forced' to identity 'team-a' from /127.0.0.1:"))
          .hasSize(1);
      assertThat(lines(server, "denied Describe from /127.0.0.1:")).singleElement().asString()
          .contains("no identity (no client certificate, no bearer token)");
      // A force-release is logged whatever its outcome, now naming the identity too.
      Thread.sleep(200);
      assertThat(lines(server, "ForceRelease of resource 'a/forced' by identity 'ops' from /127.0.0.1:"))
          .singleElement().asString().contains("deleted its lock");
      assertThat(server.log()).doesNotContain(teamA.token()).doesNotContain(ops.token());

      Scrape scrape = Scrape.of(metricsPort);
      assertThat(scrape.value("redlockd_access_denials_total", "identity", "team-a", "rpc", "Acquire")).isEqualTo(3);
      assertThat(scrape.value("redlockd_access_denials_total", "identity", "team-a", "rpc", "ForceRelease"))
          .isEqualTo(1);
      assertThat(scrape.value("redlockd_access_denials_total", "identity", "(none)", "rpc", "Describe")).isEqualTo(1);
      assertThat(scrape.value("redlockd_access_denials_total", "identity", "ops")).isZero();
      assertThat(scrape.value("redlockd_rpc_calls_total", "method", "Acquire", "code", "PERMISSION_DENIED"))
          .as("refusals also count among the calls, by their code").isEqualTo(3);
    }
  }
}
