package dev.redlockd.it.security;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.SecuredRedis;
import dev.redlockd.testing.ServerProcess;
import dev.redlockd.testing.TestCertificates.Authority;
import dev.redlockd.testing.TestCertificates.Issued;
import dev.redlockd.testing.TestCertificates;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server process against Redis nodes that need a login (ACL user and password) or TLS
 * (rediss://, with client certificates): it locks through them, says clearly when it cannot
 * get in, and never shows the password.
 */
class RedisCredentialsTest {
  /** '/', '@' and '+' must survive the URI, percent-escaped there. */
  private static final String PASSWORD = "Tr0ub4dor/&3@x+y";
  private static final String PASSWORD_IN_URI = "Tr0ub4dor%2F%263%40x+y";
  private static final List<String> ACL = List.of("--user", "default", "off",
      "--user", "redlockd", "on", ">" + PASSWORD, "~redlock:*", "&redlock:*", "+evalsha", "+eval", "+get", "+set",
      "+del", "+exists", "+pexpire", "+pttl", "+incr", "+time", "+publish", "+subscribe", "+unsubscribe", "+client|setname", "+info");

  @TempDir
  Path dir;

  /** docs/operating.md's least-privilege ACL user is the one these tests log in as (with its own password). */
  @Test
  void operatingDocShowsTheAclUserTheseTestsLogInAs() throws Exception {
    String user = "user " + String.join(" ", ACL.subList(4, ACL.size())).replace(">" + PASSWORD, ">s3cret");
    assertThat(Files.readString(Path.of(System.getProperty("user.dir"), "../docs/operating.md")))
        .as("docs/operating.md's ACL user").contains("```text\n" + user + "\n```");
  }

  private static String redisFlag(List<SecuredRedis> nodes, String userInfo) {
    return nodes.stream().map(n -> n.uri(userInfo)).collect(Collectors.joining(","));
  }

  private List<SecuredRedis> start(Supplier<SecuredRedis> node) {
    List<SecuredRedis> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      nodes.add(node.get());
    }
    return nodes;
  }

  private static Status lockOnce(ServerProcess process, String resource) {
    LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(process.channel())
        .withDeadlineAfter(10, TimeUnit.SECONDS);
    return LiveServer.codeOf(() -> {
      Lease lease = stub.acquire(acquireRequest(resource, Duration.ofSeconds(10), Duration.ZERO, "")).getLease();
      assertThat(stub.release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build())
          .getReleased()).isTrue();
    });
  }

  private static ServingStatus health(ServerProcess process) {
    return HealthGrpc.newBlockingStub(process.channel()).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus();
  }

  private static void close(List<SecuredRedis> nodes) {
    nodes.forEach(SecuredRedis::close);
  }

  @Test
  void locksThroughAclUsersAndNeverLogsThePassword() throws Exception {
    List<SecuredRedis> nodes = start(() -> SecuredRedis.plain(dir, ACL.toArray(String[]::new)));
    // Through the environment, as docs/operating.md advises: a flag would show the password in ps.
    try (ServerProcess process = ServerProcess.start(List.of(), List.of(),
        Map.of("REDLOCKD_REDIS", redisFlag(nodes, "redlockd:" + PASSWORD_IN_URI)))) {
      assertThat(lockOnce(process, "acl").isOk()).isTrue();
      assertThat(health(process)).isEqualTo(ServingStatus.SERVING);
      process.close();
      String log = process.log();
      assertThat(log).contains("redis://***@127.0.0.1:" + nodes.get(0).port()).contains("redlockd stopped");
      assertThat(log).doesNotContain(PASSWORD).doesNotContain(PASSWORD_IN_URI).doesNotContain("Tr0ub4dor");
    } finally {
      close(nodes);
    }
  }

  @Test
  void aWrongPasswordLeavesTheNodesDownSaysWhyAndNeverShowsIt() throws Exception {
    List<SecuredRedis> nodes = start(() -> SecuredRedis.plain(dir, ACL.toArray(String[]::new)));
    String wrong = "Wr0ng-but-s3cret";
    try (ServerProcess process = ServerProcess.start("--redis", redisFlag(nodes, "redlockd:" + wrong))) {
      Status status = lockOnce(process, "acl");
      assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(status.getDescription()).contains("0 of 3").doesNotContain(wrong);
      assertThat(health(process)).isEqualTo(ServingStatus.NOT_SERVING);
      String log = process.log();
      assertThat(log).contains("Redis node 127.0.0.1:" + nodes.get(0).port() + " does not answer")
          .contains("Redis node redis://***@127.0.0.1:" + nodes.get(0).port()
              + " refuses the connection: login refused: WRONGPASS")
          .doesNotContain(wrong);
    } finally {
      close(nodes);
    }
  }

  @Test
  void locksOverRedissNodesThatAskForClientCertificates() throws Exception {
    Authority ca = TestCertificates.authority(dir, "redis CA");
    Issued redisCert = ca.issue("redis", "127.0.0.1");
    Issued client = ca.issue("redlockd");
    List<SecuredRedis> nodes = start(() -> SecuredRedis.tls(dir, redisCert, ca.cert(), true));
    try (ServerProcess process = ServerProcess.start("--redis", redisFlag(nodes, ""),
        "--redis-tls-ca", ca.cert().toString(),
        "--redis-tls-cert", client.cert().toString(), "--redis-tls-key", client.key().toString())) {
      assertThat(lockOnce(process, "rediss").isOk()).as(process.log()).isTrue();
      assertThat(process.log()).contains("rediss://127.0.0.1:" + nodes.get(0).port());
    } finally {
      close(nodes);
    }
  }

  @Test
  void redissNodesWhoseAuthorityIsNotTrustedStayDownWithTheReason() throws Exception {
    Authority ca = TestCertificates.authority(dir, "redis CA");
    Issued redisCert = ca.issue("redis", "127.0.0.1");
    List<SecuredRedis> nodes = start(() -> SecuredRedis.tls(dir, redisCert, ca.cert(), false));
    // No --redis-tls-ca: the JVM's default authorities, which never signed this test CA.
    try (ServerProcess process = ServerProcess.start("--redis", redisFlag(nodes, ""))) {
      assertThat(lockOnce(process, "rediss").getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(process.log()).contains("Redis node rediss://127.0.0.1:" + nodes.get(0).port()
          + " refuses the connection: TLS handshake failed: PKIX path");
    } finally {
      close(nodes);
    }
  }
}
