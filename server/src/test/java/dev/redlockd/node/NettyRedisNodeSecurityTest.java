package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.redlockd.engine.EngineConfig;
import dev.redlockd.engine.Grant;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.server.tls.RedisTls;
import dev.redlockd.testing.SecuredRedis;
import dev.redlockd.testing.TestCertificates.Authority;
import dev.redlockd.testing.TestCertificates.Issued;
import dev.redlockd.testing.TestCertificates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ACL users, passwords and TLS against real redis-server processes: the node URI forms
 * docs/operating.md promises ({@code redis://user:pass@}, {@code rediss://}) really log in and
 * really encrypt.
 */
class NettyRedisNodeSecurityTest {
  private static final LuaScript RELEASE = LuaScript.of("compare-and-delete",
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return {redis.call('DEL', KEYS[1]), 0} end return {0, 0}");
  /**
   * A bound on a failure, not a speed: a cold JVM's first TLS handshake, AUTH and script load
   * took over 2 s on a loaded 2-core machine, and none of these tests is about the timeout (a
   * refusal fails at once, whatever it is).
   */
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  /** '/', '@' and '+' must survive the URI: percent-escaped there, as docs/operating.md says. */
  private static final String PASSWORD = "s3cr3t/p@ss+word";
  private static final String PASSWORD_IN_URI = "s3cr3t%2Fp%40ss+word";
  /** Least privilege for redlockd: its own keys, its scripts and what they call. */
  static final List<String> REDLOCKD_USER = List.of("--user", "redlockd", "on", ">" + PASSWORD, "~redlock:*",
      "+evalsha", "+eval", "+get", "+set", "+del", "+exists", "+pexpire", "+pttl", "+incr", "+time", "+client|setname");

  @TempDir
  static Path dir;
  private static Authority ca;
  private static Issued server;
  private static Issued client;
  private static Authority otherCa;

  @BeforeAll
  static void certificates() {
    ca = TestCertificates.authority(dir, "redis test CA");
    server = ca.issue("redis", "127.0.0.1", "localhost");
    client = ca.issue("redlockd");
    otherCa = TestCertificates.authority(dir, "other CA");
  }

  private static Object releaseOn(NettyRedisNode node) throws Exception {
    return node.eval(RELEASE, List.of("redlock:{r}:lock", "redlock:node:incarnation"), List.of("tok"))
        .get(TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS);
  }

  private static Throwable failureOf(NettyRedisNode node) {
    return catchThrowable(() -> releaseOn(node));
  }

  private static SSLContext tls(Authority trusted, Issued identity) {
    return RedisTls.context(Optional.of(trusted.cert()),
        Optional.ofNullable(identity).map(Issued::cert), Optional.ofNullable(identity).map(Issued::key)).orElseThrow();
  }

  private static String[] aclConfig() {
    List<String> args = new ArrayList<>(List.of("--user", "default", "off"));
    args.addAll(REDLOCKD_USER);
    return args.toArray(String[]::new);
  }

  @Test
  void aclUserLogsInWithItsPasswordAndGetsOnlyItsRights() throws Exception {
    try (SecuredRedis redis = SecuredRedis.plain(dir, aclConfig());
        NettyRedisNode node = new NettyRedisNode(
            NodeAddress.parse(redis.uri("redlockd:" + PASSWORD_IN_URI)), TIMEOUT)) {
      assertThat(releaseOn(node)).isEqualTo(List.of(0L, 0L));
      // Logged in as that user, not as a default one: keys outside redlock:* are refused.
      assertThat(catchThrowable(() -> node.command("SET", "elsewhere", "x").get(5, TimeUnit.SECONDS)))
          .hasMessageContaining("NOPERM");
      assertThat(node.toString()).doesNotContain(PASSWORD).doesNotContain(PASSWORD_IN_URI).contains("***@");
      assertThat(node.name()).isEqualTo("127.0.0.1:" + redis.port());
    }
  }

  @Test
  void wrongPasswordFailsCallsWithWrongpassAndNeverShowsThePassword() {
    try (SecuredRedis redis = SecuredRedis.plain(dir, aclConfig());
        NettyRedisNode node = new NettyRedisNode(NodeAddress.parse(redis.uri("redlockd:not-it")), TIMEOUT)) {
      Throwable failure = failureOf(node);
      assertThat(failure).hasStackTraceContaining("WRONGPASS");
      assertThat(stackTraceOf(failure)).doesNotContain("not-it");
      assertThat(node.toString()).doesNotContain("not-it");
    }
  }

  @Test
  void passwordOnlyFormsWorkWithRequirepass() throws Exception {
    try (SecuredRedis redis = SecuredRedis.plain(dir, "--requirepass", PASSWORD);
        NettyRedisNode bare = new NettyRedisNode(NodeAddress.parse(redis.uri(PASSWORD_IN_URI)), TIMEOUT);
        NettyRedisNode colon = new NettyRedisNode(NodeAddress.parse(redis.uri(":" + PASSWORD_IN_URI)), TIMEOUT);
        NettyRedisNode none = new NettyRedisNode(NodeAddress.parse(redis.uri("")), TIMEOUT)) {
      assertThat(releaseOn(bare)).isEqualTo(List.of(0L, 0L));
      assertThat(releaseOn(colon)).isEqualTo(List.of(0L, 0L));
      assertThat(failureOf(none)).hasStackTraceContaining("NOAUTH");
    }
  }

  @Test
  void engineAcquiresAndReleasesOverThreeAclNodes() {
    List<SecuredRedis> redis = new ArrayList<>();
    List<RedisNode> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        redis.add(SecuredRedis.plain(dir, aclConfig()));
        nodes.add(new NettyRedisNode(NodeAddress.parse(redis.get(i).uri("redlockd:" + PASSWORD_IN_URI)), TIMEOUT));
      }
      try (LockEngine engine = LockEngine.builder(nodes, EngineConfig.defaults()).build().start()) {
        Grant lease = engine.acquire("acl", Duration.ofSeconds(10), Duration.ZERO, "").join();
        assertThat(lease.validity()).isPositive();
        assertThat(engine.release("acl", lease.token()).join()).isTrue();
      }
    } finally {
      nodes.forEach(RedisNode::close);
      redis.forEach(SecuredRedis::close);
    }
  }

  @Test
  void redissWithTheTrustedAuthorityAndAClientCertificateWorks() throws Exception {
    try (SecuredRedis redis = SecuredRedis.tls(dir, server, ca.cert(), true);
        NettyRedisNode node = new NettyRedisNode(NodeAddress.parse(redis.uri("")), TIMEOUT, RedisIo.shared(),
            tls(ca, client))) {
      assertThat(releaseOn(node)).isEqualTo(List.of(0L, 0L));
    }
  }

  @Test
  void redissWithAclUserOverTlsWorks() throws Exception {
    try (SecuredRedis redis = SecuredRedis.tls(dir, server, ca.cert(), false, aclConfig());
        NettyRedisNode node = new NettyRedisNode(NodeAddress.parse(redis.uri("redlockd:" + PASSWORD_IN_URI)),
            TIMEOUT, RedisIo.shared(), tls(ca, null))) {
      assertThat(releaseOn(node)).isEqualTo(List.of(0L, 0L));
    }
  }

  @Test
  void redissWithoutAClientCertificateIsRefusedWhenRedisAsksForOne() {
    try (SecuredRedis redis = SecuredRedis.tls(dir, server, ca.cert(), true);
        NettyRedisNode node = new NettyRedisNode(NodeAddress.parse(redis.uri("")), TIMEOUT, RedisIo.shared(),
            tls(ca, null))) {
      // Under TLS 1.3 the client may finish its side of the handshake before Redis checks for a
      // certificate: then the refusal arrives as the connection closing, not as a handshake alert.
      assertThat(failureOf(node)).hasCauseInstanceOf(NodeConnectionException.class);
      assertThat(redis.log()).contains("peer did not return a certificate");
    }
  }

  @Test
  void redissRefusesAServerCertificateFromAnotherAuthority() {
    try (SecuredRedis redis = SecuredRedis.tls(dir, server, ca.cert(), false);
        NettyRedisNode node = new NettyRedisNode(NodeAddress.parse(redis.uri("")), TIMEOUT, RedisIo.shared(),
            tls(otherCa, null))) {
      assertThat(failureOf(node)).hasStackTraceContaining("SSLHandshakeException")
          .hasStackTraceContaining("PKIX path");
    }
  }

  @Test
  void redissChecksTheHostNameAgainstTheCertificate() {
    Issued elsewhere = ca.issue("redis.example", "redis.example");
    try (SecuredRedis redis = SecuredRedis.tls(dir, elsewhere, ca.cert(), false);
        NettyRedisNode node = new NettyRedisNode(NodeAddress.parse(redis.uri("")), TIMEOUT, RedisIo.shared(),
            tls(ca, null))) {
      // Signed by a trusted authority, but for another host: refused all the same.
      assertThat(failureOf(node)).hasStackTraceContaining("SSLHandshakeException")
          .hasStackTraceContaining("127.0.0.1");
    }
  }

  @Test
  void plaintextUriToATlsPortFails() {
    try (SecuredRedis redis = SecuredRedis.tls(dir, server, ca.cert(), false);
        NettyRedisNode node = new NettyRedisNode(
            NodeAddress.parse(redis.uri("").replace("rediss://", "redis://")), TIMEOUT)) {
      // Redis drops a connection that does not speak TLS: a connection failure, not a timeout.
      assertThat(failureOf(node)).hasCauseInstanceOf(NodeConnectionException.class);
    }
  }

  private static String stackTraceOf(Throwable t) {
    java.io.StringWriter out = new java.io.StringWriter();
    t.printStackTrace(new java.io.PrintWriter(out));
    return out.toString();
  }
}
