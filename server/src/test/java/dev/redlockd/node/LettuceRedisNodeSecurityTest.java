package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.redlockd.server.tls.RedisTls;
import dev.redlockd.testing.SecuredRedis;
import dev.redlockd.testing.TestCertificates;
import dev.redlockd.testing.TestCertificates.Authority;
import dev.redlockd.testing.TestCertificates.Issued;
import java.io.PrintWriter;
import java.io.StringWriter;
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
 * The Lettuce node client logs in and encrypts as the built-in one does: docs/operating.md's ACL
 * user (which may not PING), passwords in the URI, and TLS from the server's SSLContext with
 * the host checked against the certificate.
 */
class LettuceRedisNodeSecurityTest {
  private static final LuaScript RELEASE = LuaScript.of("compare-and-delete",
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return {redis.call('DEL', KEYS[1]), 0} end return {0, 0}");
  /** Roomy: a cold JVM's first TLS handshake is not what these tests measure. */
  private static final Duration TIMEOUT = Duration.ofSeconds(2);
  private static final String PASSWORD = "s3cr3t/p@ss+word";
  private static final String PASSWORD_IN_URI = "s3cr3t%2Fp%40ss+word";

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

  private static Object releaseOn(RedisNode node) throws Exception {
    return node.eval(RELEASE, List.of("redlock:{r}:lock", "redlock:node:incarnation"), List.of("tok"))
        .get(5, TimeUnit.SECONDS);
  }

  private static Throwable failureOf(RedisNode node) {
    return catchThrowable(() -> releaseOn(node));
  }

  private static SSLContext tls(Authority trusted, Issued identity) {
    return RedisTls.context(Optional.of(trusted.cert()),
        Optional.ofNullable(identity).map(Issued::cert), Optional.ofNullable(identity).map(Issued::key)).orElseThrow();
  }

  private static String[] aclConfig() {
    List<String> args = new ArrayList<>(List.of("--user", "default", "off"));
    args.addAll(NettyRedisNodeSecurityTest.REDLOCKD_USER);
    return args.toArray(String[]::new);
  }

  private static LettuceRedisNode node(SecuredRedis redis, String userInfo, SSLContext tls) {
    return new LettuceRedisNode(NodeAddress.parse(redis.uri(userInfo)), TIMEOUT, RedisIo.shared(), tls);
  }

  @Test
  void aclUserLogsInWithItsPasswordAndGetsOnlyItsRights() throws Exception {
    try (SecuredRedis redis = SecuredRedis.plain(dir, aclConfig());
        LettuceRedisNode node = node(redis, "redlockd:" + PASSWORD_IN_URI, null)) {
      assertThat(releaseOn(node)).isEqualTo(List.of(0L, 0L));
      assertThat(catchThrowable(() -> node.command("SET", "elsewhere", "x").get(5, TimeUnit.SECONDS)))
          .cause().isInstanceOf(RedisErrorReply.class).hasMessageContaining("NOPERM");
      assertThat(node.toString()).doesNotContain(PASSWORD).doesNotContain(PASSWORD_IN_URI);
    }
  }

  @Test
  void wrongPasswordFailsCallsWithWrongpassAndNeverShowsThePassword() {
    try (SecuredRedis redis = SecuredRedis.plain(dir, aclConfig());
        LettuceRedisNode node = node(redis, "redlockd:not-it", null)) {
      Throwable failure = failureOf(node);
      assertThat(failure).hasCauseInstanceOf(NodeConnectionException.class).hasStackTraceContaining("WRONGPASS");
      assertThat(stackTraceOf(failure)).doesNotContain("not-it");
    }
  }

  @Test
  void passwordOnlyFormWorksWithRequirepass() throws Exception {
    try (SecuredRedis redis = SecuredRedis.plain(dir, "--requirepass", PASSWORD);
        LettuceRedisNode bare = node(redis, PASSWORD_IN_URI, null);
        LettuceRedisNode none = node(redis, "", null)) {
      assertThat(releaseOn(bare)).isEqualTo(List.of(0L, 0L));
      assertThat(failureOf(none)).hasStackTraceContaining("NOAUTH");
    }
  }

  @Test
  void redissWithTheTrustedAuthorityAndAClientCertificateWorks() throws Exception {
    try (SecuredRedis redis = SecuredRedis.tls(dir, server, ca.cert(), true);
        LettuceRedisNode node = node(redis, "", tls(ca, client))) {
      assertThat(releaseOn(node)).isEqualTo(List.of(0L, 0L));
    }
  }

  @Test
  void redissWithAclUserOverTlsWorks() throws Exception {
    try (SecuredRedis redis = SecuredRedis.tls(dir, server, ca.cert(), false, aclConfig());
        LettuceRedisNode node = node(redis, "redlockd:" + PASSWORD_IN_URI, tls(ca, null))) {
      assertThat(releaseOn(node)).isEqualTo(List.of(0L, 0L));
    }
  }

  @Test
  void redissRefusesAServerCertificateFromAnotherAuthority() {
    try (SecuredRedis redis = SecuredRedis.tls(dir, server, ca.cert(), false);
        LettuceRedisNode node = node(redis, "", tls(otherCa, null))) {
      assertThat(failureOf(node)).hasCauseInstanceOf(NodeConnectionException.class)
          .hasStackTraceContaining("PKIX path");
    }
  }

  @Test
  void redissChecksTheHostNameAgainstTheCertificate() {
    Issued elsewhere = ca.issue("redis.example", "redis.example");
    try (SecuredRedis redis = SecuredRedis.tls(dir, elsewhere, ca.cert(), false);
        LettuceRedisNode node = node(redis, "", tls(ca, null))) {
      assertThat(failureOf(node)).hasCauseInstanceOf(NodeConnectionException.class)
          .hasStackTraceContaining("SSLHandshakeException");
    }
  }

  private static String stackTraceOf(Throwable t) {
    StringWriter out = new StringWriter();
    t.printStackTrace(new PrintWriter(out));
    return out.toString();
  }
}
