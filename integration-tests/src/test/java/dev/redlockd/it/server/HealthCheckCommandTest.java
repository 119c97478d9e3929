package dev.redlockd.it.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.TestCertificates;
import dev.redlockd.testing.TestCertificates.Authority;
import dev.redlockd.testing.TestCertificates.Issued;
import dev.redlockd.testing.ServerProcess;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code java -jar redlockd-server.jar healthcheck}, as a container's HEALTHCHECK runs it. */
class HealthCheckCommandTest {

  private record Outcome(int exitCode, String output, long millis) {}

  /** Runs the jar's healthcheck subcommand as its own process. */
  private static Outcome healthcheck(String... flags) throws IOException, InterruptedException {
    return healthcheck(Map.of(), flags);
  }

  /** With these environment variables (the server container's, say) set for it. */
  private static Outcome healthcheck(Map<String, String> env, String... flags) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", ServerProcess.jar().toString(), "healthcheck"));
    command.addAll(List.of(flags));
    long start = System.nanoTime();
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().putAll(env);
    Process process = builder.start();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("healthcheck still running after 30 s: " + command);
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    return new Outcome(process.exitValue(), output, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
  }

  private static ServingStatus health(ServerProcess server) {
    return HealthGrpc.newBlockingStub(server.channel())
        .withDeadlineAfter(2, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance())
        .getStatus();
  }

  @Test
  void exitsZeroWhileServingAndOneOnceAMajorityOfNodesIsGone() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag())) {
      String port = Integer.toString(server.port());
      // Generous: two cold JVMs on a loaded machine can take more than the 2 s default to
      // answer their first call. The timeout itself is the subject of another test.
      String timeout = "10s";

      Outcome serving = healthcheck("--port", port, "--timeout", timeout);
      assertThat(serving.exitCode()).as(serving.output()).isZero();
      assertThat(serving.output()).isEqualTo("redlockd at 127.0.0.1:" + port + ": SERVING");

      cluster.pause(0, 1);
      try {
        await().atMost(Duration.ofSeconds(5)).until(() -> health(server) == ServingStatus.NOT_SERVING);
        Outcome notServing = healthcheck("--port", port, "--timeout", timeout);
        assertThat(notServing.exitCode()).as(notServing.output()).isEqualTo(1);
        assertThat(notServing.output()).isEqualTo("redlockd at 127.0.0.1:" + port + ": NOT_SERVING");
      } finally {
        cluster.resume(0, 1);
      }

      await().atMost(Duration.ofSeconds(5)).until(() -> health(server) == ServingStatus.SERVING);
      assertThat(healthcheck("--port", port, "--host", "localhost", "--timeout", timeout).exitCode()).isZero();
    }
  }

  @Test
  void speaksTlsWithTheServersOwnCertificateFromTheServersEnvironment(@TempDir Path dir) throws Exception {
    Authority ca = TestCertificates.authority(dir, "healthcheck CA");
    // Names no address the check dials: the server's own certificate is trusted as it is.
    Issued cert = ca.issue("redlockd", "redlockd.example.com");
    Map<String, String> serverEnv = Map.of(
        "REDLOCKD_TLS_CERT", cert.cert().toString(), "REDLOCKD_TLS_KEY", cert.key().toString());
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start(List.of(), List.of("--redis", cluster.redisFlag()), serverEnv)) {
      String port = Integer.toString(server.port());

      Outcome inContainer = healthcheck(serverEnv, "--port", port, "--timeout", "10s");
      assertThat(inContainer.exitCode()).as(inContainer.output()).isZero();
      assertThat(inContainer.output()).isEqualTo("redlockd at 127.0.0.1:" + port + ": SERVING");

      Outcome withFlag = healthcheck("--port", port, "--timeout", "10s", "--tls-cert", cert.cert().toString());
      assertThat(withFlag.exitCode()).as(withFlag.output()).isZero();

      // Trusting the authority checks the name: the certificate must name the host dialled.
      Issued named = ca.issue("other", "127.0.0.1");
      Outcome wrongCertificate = healthcheck("--port", port, "--timeout", "10s", "--tls-cert", named.cert().toString());
      assertThat(wrongCertificate.exitCode()).as(wrongCertificate.output()).isEqualTo(1);
      Outcome nameNotInCertificate = healthcheck("--port", port, "--timeout", "10s", "--tls-ca", ca.cert().toString());
      assertThat(nameNotInCertificate.exitCode()).as(nameNotInCertificate.output()).isEqualTo(1);

      Outcome plaintext = healthcheck("--port", port, "--timeout", "10s");
      assertThat(plaintext.exitCode()).as(plaintext.output()).isEqualTo(1);
      assertThat(plaintext.output()).startsWith("redlockd at 127.0.0.1:" + port + ": unreachable");
    }
  }

  @Test
  void speaksMutualTlsWithAClientCertificate(@TempDir Path dir) throws Exception {
    Authority ca = TestCertificates.authority(dir, "healthcheck CA");
    Issued cert = ca.issue("redlockd", "127.0.0.1");
    Issued client = ca.issue("healthcheck");
    Issued stranger = TestCertificates.authority(dir, "another CA").issue("stranger");
    Map<String, String> serverEnv = Map.of("REDLOCKD_TLS_CERT", cert.cert().toString(),
        "REDLOCKD_TLS_KEY", cert.key().toString(), "REDLOCKD_TLS_CLIENT_CA", ca.cert().toString());
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start(List.of(), List.of("--redis", cluster.redisFlag()), serverEnv)) {
      String port = Integer.toString(server.port());

      Outcome withClientCertificate = healthcheck("--port", port, "--timeout", "10s",
          "--tls-ca", ca.cert().toString(),
          "--tls-client-cert", client.cert().toString(), "--tls-client-key", client.key().toString());
      assertThat(withClientCertificate.exitCode()).as(withClientCertificate.output()).isZero();
      assertThat(withClientCertificate.output()).isEqualTo("redlockd at 127.0.0.1:" + port + ": SERVING");

      // In the server's container: its own certificate and key, which the client CA signed.
      Outcome inContainer = healthcheck(serverEnv, "--port", port, "--timeout", "10s");
      assertThat(inContainer.exitCode()).as(inContainer.output()).isZero();

      Outcome withoutClientCertificate = healthcheck("--port", port, "--timeout", "10s",
          "--tls-cert", cert.cert().toString());
      assertThat(withoutClientCertificate.exitCode()).as(withoutClientCertificate.output()).isEqualTo(1);
      Outcome strangersCertificate = healthcheck("--port", port, "--timeout", "10s",
          "--tls-cert", cert.cert().toString(),
          "--tls-client-cert", stranger.cert().toString(), "--tls-client-key", stranger.key().toString());
      assertThat(strangersCertificate.exitCode()).as(strangersCertificate.output()).isEqualTo(1);

      Outcome halfAPair = healthcheck("--port", port, "--tls-client-cert", client.cert().toString());
      assertThat(halfAPair.exitCode()).isEqualTo(2);
      assertThat(halfAPair.output()).contains("--tls-client-cert needs --tls-client-key").doesNotContain("\n");
    }
  }

  @Test
  void exitsOneWhenNothingListens() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    Outcome outcome = healthcheck("--port", Integer.toString(closedPort));
    assertThat(outcome.exitCode()).as(outcome.output()).isEqualTo(1);
    assertThat(outcome.output())
        .startsWith("redlockd at 127.0.0.1:" + closedPort + ": unreachable, UNAVAILABLE")
        .contains("Connection refused")
        .doesNotContain("\n");
  }

  @Test
  void exitsOneWhenTheAnswerDoesNotComeWithinTheTimeout() throws Exception {
    // A socket that takes the connection (the backlog does) and never speaks HTTP/2.
    try (ServerSocket silent = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      Outcome outcome = healthcheck("--port", Integer.toString(silent.getLocalPort()), "--timeout", "500ms");
      assertThat(outcome.exitCode()).as(outcome.output()).isEqualTo(1);
      assertThat(outcome.output())
          .isEqualTo("redlockd at 127.0.0.1:" + silent.getLocalPort() + ": no answer within 500ms");
      // JVM start-up included: the timeout, not a default, bounded the wait.
      assertThat(outcome.millis()).isLessThan(15_000);
    }
  }

  @Test
  void badFlagsExitTwoWithAReason() throws Exception {
    Outcome badTimeout = healthcheck("--timeout", "soon");
    assertThat(badTimeout.exitCode()).isEqualTo(2);
    assertThat(badTimeout.output()).startsWith("redlockd: ").contains("soon").doesNotContain("\n");

    // Server flags before the word would otherwise be ignored and the default port checked.
    List<String> command = new ArrayList<>(ServerProcess.command(List.of(), List.of("healthcheck")));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertThat(process.exitValue()).as(output).isEqualTo(2);
    assertThat(output).contains("healthcheck takes its flags after the word healthcheck");
  }
}
