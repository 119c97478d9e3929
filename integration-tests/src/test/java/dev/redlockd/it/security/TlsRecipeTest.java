package dev.redlockd.it.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.server.tls.ServerTls;
import dev.redlockd.testing.MissingRuntime;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operating.md's OpenSSL recipe for a test authority, a server and a client certificate runs
 * under a plain POSIX shell ({@code sh}, dash on Debian, which has no {@code <(...)}), and makes
 * what the server's TLS takes: its gRPC port serves over mutual TLS with them, and a client that
 * trusts the authority and shows the client certificate reaches it as {@code localhost}.
 */
class TlsRecipeTest {
  private static final Path OPERATING = Path.of(System.getProperty("user.dir"), "../docs/operating.md");

  @TempDir
  Path home;

  @Test
  void theRecipeRunsUnderShAndMakesCertificatesForMutualTls() throws Exception {
    Matcher block = Pattern.compile("<!-- tested by TlsRecipeTest -->\\n```sh\\n(.*?)\\n```", Pattern.DOTALL)
        .matcher(Files.readString(OPERATING));
    assertThat(block.find()).as("docs/operating.md's OpenSSL recipe").isTrue();
    boolean openssl = Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        .anyMatch(dir -> Files.isExecutable(Path.of(dir, "openssl")));
    if (!openssl) {
      MissingRuntime.skipOrFail("no openssl on PATH: apt-get install openssl");
    }
    // With HOME here, ~/redlockd-tls is made under this test's directory.
    ProcessBuilder sh = new ProcessBuilder("sh", "-e", "-c", block.group(1)).redirectErrorStream(true);
    sh.environment().put("HOME", home.toString());
    Process process = sh.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();

    Path tls = home.resolve("redlockd-tls");
    Server server = Grpc.newServerBuilderForPort(0, ServerTls.credentials(Optional.of(tls.resolve("server.pem")),
            Optional.of(tls.resolve("server.key")), Optional.of(tls.resolve("ca.pem"))))
        .addService(new HealthStatusManager().getHealthService())
        .build()
        .start();
    ChannelCredentials client = TlsChannelCredentials.newBuilder()
        .trustManager(tls.resolve("ca.pem").toFile())
        .keyManager(tls.resolve("client.pem").toFile(), tls.resolve("client.key").toFile())
        .build();
    ManagedChannel channel = Grpc.newChannelBuilder("localhost:" + server.getPort(), client).build();
    try {
      assertThat(HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
    } finally {
      channel.shutdownNow();
      server.shutdownNow();
    }
  }
}
