package dev.redlockd.it.security;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LockOptions;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import dev.redlockd.testing.TestCertificates.Authority;
import dev.redlockd.testing.TestCertificates.Issued;
import dev.redlockd.testing.TestCertificates;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gRPC port over TLS and mutual TLS: the real server process, real sockets, certificates made here. */
class GrpcTlsTest {
  @TempDir
  static Path dir;
  private static RedisCluster cluster;
  private static Authority ca;
  private static Issued server;
  private static Issued client;
  private static Issued strangerClient;
  private static Authority otherCa;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(3);
    ca = TestCertificates.authority(dir, "redlockd test CA");
    server = ca.issue("localhost", "127.0.0.1", "localhost");
    client = ca.issue("billing-service");
    otherCa = TestCertificates.authority(dir, "another CA");
    strangerClient = otherCa.issue("stranger");
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static ChannelCredentials trusting(Authority authority, Issued identity) throws IOException {
    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder().trustManager(authority.cert().toFile());
    if (identity != null) {
      tls.keyManager(identity.cert().toFile(), identity.key().toFile());
    }
    return tls.build();
  }

  /**
   * What a server that just started gets from its nodes: a cold JVM beside other test classes
   * missed the 50 ms default on every node in its first round (a fresh-clone run refused the
   * first Acquire here). Node timeouts are not what these tests are about.
   */
  private static final String NODE_TIMEOUT = "1s";

  private static void assertOk(Status status) {
    assertThat(status.getCode()).as(status.toString()).isEqualTo(Status.Code.OK);
  }

  /** Acquire then Release on a fresh channel: OK, or the status the first call ended with. */
  private static Status acquireAndRelease(ServerProcess process, ChannelCredentials credentials, String resource)
      throws InterruptedException {
    ManagedChannel channel = process.newChannel(credentials);
    try {
      LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channel)
          .withDeadlineAfter(10, TimeUnit.SECONDS);
      return LiveServer.codeOf(() -> {
        var lease = stub.acquire(acquireRequest(resource, Duration.ofSeconds(10), Duration.ZERO, "")).getLease();
        assertThat(stub.release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken())
            .build()).getReleased()).isTrue();
      });
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void tlsServesClientsThatTrustItsAuthorityAndRefusesPlaintext() throws Exception {
    try (ServerProcess process = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", NODE_TIMEOUT,
        "--tls-cert", server.cert().toString(), "--tls-key", server.key().toString())) {
      assertOk(acquireAndRelease(process, trusting(ca, null), "tls"));
      // A client certificate is not asked for, and one offered does no harm.
      assertOk(acquireAndRelease(process, trusting(ca, client), "tls"));

      ManagedChannel healthChannel = process.newChannel(trusting(ca, null));
      try {
        assertThat(HealthGrpc.newBlockingStub(healthChannel).withDeadlineAfter(10, TimeUnit.SECONDS)
            .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
      } finally {
        healthChannel.shutdownNow();
      }

      Status plaintext = acquireAndRelease(process, InsecureChannelCredentials.create(), "tls");
      assertThat(plaintext.getCode()).as(plaintext.toString()).isEqualTo(Status.Code.UNAVAILABLE);
      // The client checks the server too: a certificate from an authority it does not trust is refused.
      Status untrusted = acquireAndRelease(process, trusting(otherCa, null), "tls");
      assertThat(untrusted.getCode()).as(untrusted.toString()).isEqualTo(Status.Code.UNAVAILABLE);

      assertThat(process.log()).contains("gRPC security: TLS: certificate " + server.cert());
    }
  }

  @Test
  void mutualTlsLetsInOnlyClientsWithACertificateFromTheClientAuthority() throws Exception {
    // Set through the environment this time, as a container would.
    try (ServerProcess process = ServerProcess.start(List.of(), List.of("--redis", cluster.redisFlag(),
        "--node-timeout", NODE_TIMEOUT),
        Map.of("REDLOCKD_TLS_CERT", server.cert().toString(), "REDLOCKD_TLS_KEY", server.key().toString(),
            "REDLOCKD_TLS_CLIENT_CA", ca.cert().toString()))) {
      assertOk(acquireAndRelease(process, trusting(ca, client), "mtls"));

      Status noCertificate = acquireAndRelease(process, trusting(ca, null), "mtls");
      assertThat(noCertificate.getCode()).as(noCertificate.toString()).isEqualTo(Status.Code.UNAVAILABLE);
      Status otherAuthority = acquireAndRelease(process, trusting(ca, strangerClient), "mtls");
      assertThat(otherAuthority.getCode()).as(otherAuthority.toString()).isEqualTo(Status.Code.UNAVAILABLE);
      Status plaintext = acquireAndRelease(process, InsecureChannelCredentials.create(), "mtls");
      assertThat(plaintext.getCode()).isEqualTo(Status.Code.UNAVAILABLE);

      assertThat(process.log()).contains("gRPC security: mutual TLS");
      // The Java snippet of docs/operating.md's TLS section, run as written.
      ReadmeTlsClientExample.Connected connected = ReadmeTlsClientExample.connect("127.0.0.1:" + process.port(),
          ca.cert().toFile(), client.cert().toFile(), client.key().toFile());
      try (Lease lease = connected.locks().acquire("readme-tls", LockOptions.ttl(Duration.ofSeconds(10)))) {
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.fencingToken()).isPositive();
      } finally {
        connected.channel().shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void operatingDocShowsTheTlsClientExampleVerbatim() throws IOException {
    Path module = Path.of(System.getProperty("user.dir"));
    String source = Files.readString(module.resolve(
        "src/test/java/dev/redlockd/it/security/ReadmeTlsClientExample.java"));
    Matcher m = Pattern.compile("// README:tls-client-example:begin\\n(.*?)\\n\\s*// README:tls-client-example:end",
        Pattern.DOTALL).matcher(source);
    assertThat(m.find()).isTrue();
    List<String> lines = m.group(1).lines().toList();
    int indent = lines.stream().filter(l -> !l.isBlank())
        .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    String example = String.join("\n", lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList());
    assertThat(Files.readString(module.resolve("../docs/operating.md"))).as("docs/operating.md's TLS client example")
        .contains("```java\n" + example + "\n```");
  }

  private static String[] run(String... flags) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(ServerProcess.command(List.of(), List.of(flags))).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return new String[] {Integer.toString(p.exitValue()), out.strip()};
  }

  @Test
  void badTlsFlagsStopStartUpWithAOneLineReason() throws Exception {
    String cert = server.cert().toString();
    String key = server.key().toString();
    String missing = dir.resolve("missing.pem").toString();
    Issued other = ca.issue("other", "localhost");
    List<String[]> cases = new ArrayList<>(List.of(
        run("--tls-cert", cert),
        run("--tls-key", key),
        run("--tls-client-ca", ca.cert().toString()),
        run("--tls-cert", cert, "--tls-key", missing),
        run("--tls-cert", key, "--tls-key", key),
        run("--tls-cert", cert, "--tls-key", other.key().toString()),
        run("--redis", cluster.redisFlag(), "--redis-tls-ca", ca.cert().toString())));
    String[] expected = {
        "--tls-cert needs --tls-key",
        "--tls-key needs --tls-cert",
        "--tls-client-ca needs --tls-cert",
        "--tls-key: no such file " + missing,
        "holds no PEM certificate",
        "is not the private key of the certificate in " + cert,
        "no --redis node uses rediss://",
    };
    for (int i = 0; i < cases.size(); i++) {
      String[] result = cases.get(i);
      assertThat(result[0]).as(result[1]).isEqualTo("2");
      assertThat(result[1]).startsWith("redlockd: ").doesNotContain("\n").doesNotContain("Exception")
          .contains(expected[i]);
    }
  }
}
