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
import dev.redlockd.testing.UntilAvailable;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/**
 * The server process against Redis nodes that need a login (ACL user and password) or TLS
 * (rediss://, with client certificates): it locks through them, says clearly when it cannot
 * get in, and never shows the password. The ACL nodes run docs/operating.md's least-privilege
 * user exactly as the page writes it, and a server logging in as that user starts without a
 * warning about it. One set of ACL nodes and one of TLS nodes serve every case, and the four
 * servers (one is let in by no node, for both ways of being refused) start side by side where
 * they can.
 */
class RedisCredentialsTest {
  private static final Path OPERATING = Path.of(System.getProperty("user.dir"), "../docs/operating.md");
  /** '/', '@' and '+' must survive the URI, percent-escaped there. */
  private static final String PASSWORD = "Tr0ub4dor/&3@x+y";
  private static final String PASSWORD_IN_URI = "Tr0ub4dor%2F%263%40x+y";
  private static final String WRONG = "Wr0ng-but-s3cret";
  /** The warnings any server logs when it starts open (no --policy) on a cluster that is new. */
  private static final Pattern EXPECTED_WARNINGS = Pattern.compile(
      "access control: OPEN, no --policy given|No Redis node holds an incarnation key");
  private static final Pattern TIMEOUTS = Pattern.compile("is down: it does not answer \\(timed out\\)|Quorum lost");

  @TempDir
  static Path dir;

  private static List<SecuredRedis> aclNodes = List.of();
  private static List<SecuredRedis> tlsNodes = List.of();
  private static TestAbortedException noTls;
  private static ServerProcess documented;
  private static ServerProcess escaped;
  /** Let in by no node: the ACL nodes with a wrong password, the TLS nodes with an authority it does not trust. */
  private static ServerProcess refused;
  private static ServerProcess rediss;

  /** docs/operating.md's ACL user, the line in its block marked as tested by this class. */
  static String documentedAclUser() throws IOException {
    Matcher m = Pattern.compile("<!-- tested by RedisCredentialsTest -->\\n```text\\n(user [^\\n]*)\\n```")
        .matcher(Files.readString(OPERATING));
    assertThat(m.find()).as("docs/operating.md's ACL user, in a text block tested by RedisCredentialsTest").isTrue();
    return m.group(1);
  }

  @BeforeAll
  static void startNodesAndServers() throws IOException {
    // The documented line as it is, and the same rights for a user whose password needs escaping.
    List<String> user = Arrays.asList(documentedAclUser().split(" "));
    List<String> acl = new ArrayList<>(List.of("--user", "default", "off", "--user"));
    acl.addAll(user.subList(1, user.size()));
    acl.addAll(List.of("--user", "escaped", ">" + PASSWORD));
    user.stream().skip(2).filter(word -> !word.startsWith(">")).forEach(acl::add);
    aclNodes = start(() -> SecuredRedis.plain(dir, acl.toArray(String[]::new)));
    String documentedLogin = user.get(1) + ":" + user.stream().filter(w -> w.startsWith(">")).findFirst()
        .orElseThrow().substring(1);

    Authority ca = TestCertificates.authority(dir, "redis CA");
    Issued redisCert = ca.issue("redis", "127.0.0.1");
    Issued client = ca.issue("redlockd");
    try {
      tlsNodes = start(() -> SecuredRedis.tls(dir, redisCert, ca.cert(), true));
    } catch (TestAbortedException e) {
      noTls = e; // the TLS cases skip (or fail under CI) with the reason; the others run
    }

    // Side by side, except two servers that log in to the same new cluster: the second starts once the
    // first has made the cluster (two at once could each find the other's half-made cluster).
    List<CompletableFuture<ServerProcess>> starting = new ArrayList<>();
    // Through the environment, as docs/operating.md advises: a flag would show the password in ps.
    starting.add(starting(Map.of("REDLOCKD_REDIS", redisFlag(aclNodes, documentedLogin))));
    starting.add(starting.get(0).thenCompose(first ->
        starting(Map.of("REDLOCKD_REDIS", redisFlag(aclNodes, "escaped:" + PASSWORD_IN_URI)))));
    // No --redis-tls-ca: the JVM's default authorities, which never signed this test CA.
    starting.add(starting(Map.of(), "--redis", redisFlag(aclNodes, user.get(1) + ":" + WRONG)
        + (noTls == null ? "," + redisFlag(tlsNodes, "") : "")));
    if (noTls == null) {
      starting.add(starting(Map.of(), "--redis", redisFlag(tlsNodes, ""), "--redis-tls-ca", ca.cert().toString(),
          "--redis-tls-cert", client.cert().toString(), "--redis-tls-key", client.key().toString()));
    }
    CompletableFuture.allOf(starting.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
    List<ServerProcess> started = starting.stream().map(s -> s.isCompletedExceptionally() ? null : s.join()).toList();
    documented = started.get(0);
    escaped = started.get(1);
    refused = started.get(2);
    if (noTls == null) {
      rediss = started.get(3);
    }
    CompletableFuture.allOf(starting.toArray(CompletableFuture[]::new)).join(); // a failure: stopAll stops the rest
  }

  @AfterAll
  static void stopAll() throws InterruptedException {
    for (ServerProcess server : new ServerProcess[] {documented, escaped, refused, rediss}) {
      if (server != null) {
        server.close();
      }
    }
    aclNodes.forEach(SecuredRedis::close);
    tlsNodes.forEach(SecuredRedis::close);
  }

  private static CompletableFuture<ServerProcess> starting(Map<String, String> env, String... flags) {
    return CompletableFuture.supplyAsync(() -> ServerProcess.start(List.of(), List.of(flags), env));
  }

  private static List<SecuredRedis> start(Supplier<SecuredRedis> node) {
    List<SecuredRedis> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        nodes.add(node.get());
      }
    } catch (RuntimeException e) {
      nodes.forEach(SecuredRedis::close);
      throw e;
    }
    return List.copyOf(nodes);
  }

  private static String redisFlag(List<SecuredRedis> nodes, String userInfo) {
    return nodes.stream().map(n -> n.uri(userInfo)).collect(Collectors.joining(","));
  }

  private static Status lockOnce(ServerProcess process, String resource) {
    return lock(process, resource, Duration.ZERO);
  }

  /**
   * A lock and its release, its Acquire retried on UNAVAILABLE for {@code retried} as a client
   * retries it: a server just started answers its first Acquire from cold code (about 110 ms
   * here on a quiet machine, 50 ms of it allowed to the nodes), which a busy one can miss.
   */
  private static Status lock(ServerProcess process, String resource, Duration retried) {
    LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(process.channel())
        .withDeadlineAfter(10 + retried.toSeconds(), TimeUnit.SECONDS);
    return LiveServer.codeOf(() -> {
      Lease lease = UntilAvailable.call(retried,
          () -> stub.acquire(acquireRequest(resource, Duration.ofSeconds(10), Duration.ZERO, ""))).getLease();
      assertThat(stub.release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build())
          .getReleased()).isTrue();
    });
  }

  private static ServingStatus health(ServerProcess process) {
    return HealthGrpc.newBlockingStub(process.channel()).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus();
  }

  private static void assumeTls() {
    if (noTls != null) {
      throw noTls;
    }
  }

  @Test
  void theDocumentedAclUserLocksAndItsServerStartsWithoutAWarningAboutIt() {
    assertThat(lock(documented, "acl", Duration.ofSeconds(10)).isOk()).as(documented.log()).isTrue();
    String log = documented.log();
    // About its rights, nothing: no refused login, command, INFO or pub/sub. (Timeouts are no
    // concern of the ACL's; a busy machine makes some.)
    List<String> warnings = log.lines().filter(l -> l.contains(" WARN "))
        .filter(l -> !EXPECTED_WARNINGS.matcher(l).find() && !TIMEOUTS.matcher(l).find()).toList();
    assertThat(warnings).as(log).isEmpty();
    // The user may not run CONFIG GET: the eviction check is skipped, and the log says just that.
    assertThat(log).containsPattern("Redis node 127\\.0\\.0\\.1:\\d+ refuses CONFIG GET \\(NOPERM")
        .contains("its maxmemory-policy, which could evict held locks, is not checked");
  }

  @Test
  void locksWithAPasswordThatNeedsEscapingAndNeverLogsIt() throws Exception {
    assertThat(lock(escaped, "acl-escaped", Duration.ofSeconds(10)).isOk()).isTrue();
    assertThat(health(escaped)).isEqualTo(ServingStatus.SERVING);
    escaped.close();
    String log = escaped.log();
    assertThat(log).contains("redis://***@127.0.0.1:" + aclNodes.get(0).port()).contains("redlockd stopped");
    assertThat(log).doesNotContain(PASSWORD).doesNotContain(PASSWORD_IN_URI).doesNotContain("Tr0ub4dor");
  }

  @Test
  void aWrongPasswordLeavesTheNodesDownSaysWhyAndNeverShowsIt() {
    Status status = lockOnce(refused, "acl");
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(status.getDescription()).contains("0 of " + (noTls == null ? 6 : 3)).doesNotContain(WRONG);
    assertThat(health(refused)).isEqualTo(ServingStatus.NOT_SERVING);
    String log = refused.log();
    assertThat(log).contains("Redis node 127.0.0.1:" + aclNodes.get(0).port() + " does not answer")
        .contains("Redis node redis://***@127.0.0.1:" + aclNodes.get(0).port()
            + " refuses the connection: login refused: WRONGPASS")
        .doesNotContain(WRONG);
  }

  @Test
  void locksOverRedissNodesThatAskForClientCertificates() {
    assumeTls();
    assertThat(lock(rediss, "rediss", Duration.ofSeconds(10)).isOk()).as(rediss.log()).isTrue();
    assertThat(rediss.log()).contains("rediss://127.0.0.1:" + tlsNodes.get(0).port());
  }

  @Test
  void redissNodesWhoseAuthorityIsNotTrustedStayDownWithTheReason() {
    assumeTls();
    assertThat(lockOnce(refused, "rediss").getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(refused.log()).contains("Redis node rediss://127.0.0.1:" + tlsNodes.get(0).port()
        + " refuses the connection: TLS handshake failed: PKIX path");
  }
}
