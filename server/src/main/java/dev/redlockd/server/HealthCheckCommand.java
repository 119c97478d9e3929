package dev.redlockd.server;

import io.grpc.Grpc;
import dev.redlockd.server.tls.ClientTls;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code redlockd healthcheck}: asks a running server's {@code grpc.health.v1.Health/Check}
 * (service "") once, for container health checks and scripts. Exit 0 only when it says
 * SERVING; any other answer, no answer or no connection is 1.
 */
@Command(name = "healthcheck", sortOptions = false,
    description = "Asks a running redlockd whether it is SERVING (a quorum of Redis nodes votes): "
        + "exit 0 if so, 1 otherwise (NOT_SERVING, unreachable, no answer within --timeout).")
final class HealthCheckCommand {
  static final int SERVING = 0;
  static final int NOT_HEALTHY = 1;

  // The same default as the server's --port, so a container that moves the server with
  // REDLOCKD_PORT needs no change to its health check.
  @Option(names = "--port", defaultValue = "${env:REDLOCKD_PORT:-50051}",
      description = "The server's gRPC port (default ${DEFAULT-VALUE}).")
  int port;

  @Option(names = "--host", defaultValue = "127.0.0.1",
      description = "The server's host (default ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--timeout", defaultValue = "2s", converter = DurationFlag.class,
      description = "How long to wait for the answer, connecting included (default ${DEFAULT-VALUE}).")
  Duration timeout;

  // The server's own variable: in the server's container the check speaks TLS with no flag.
  @Option(names = "--tls-cert", defaultValue = "${env:REDLOCKD_TLS_CERT:-}", paramLabel = "<pem file>",
      description = "The server's --tls-cert: speak TLS and trust exactly that certificate, whatever host name it "
          + "names (default: REDLOCKD_TLS_CERT, as the server's).")
  String tlsCert;

  @Option(names = "--tls-ca", defaultValue = "${env:REDLOCKD_HEALTHCHECK_TLS_CA:-}", paramLabel = "<pem file>",
      description = "Speak TLS and trust the authorities in this PEM bundle instead; the server's certificate must "
          + "then name --host (default: REDLOCKD_HEALTHCHECK_TLS_CA).")
  String tlsCa;

  @Option(names = "--tls-client-cert", defaultValue = "${env:REDLOCKD_HEALTHCHECK_TLS_CLIENT_CERT:-}",
      paramLabel = "<pem file>",
      description = "For a server with --tls-client-ca (mutual TLS): the client certificate chain to show; needs "
          + "--tls-client-key (default: REDLOCKD_HEALTHCHECK_TLS_CLIENT_CERT; without it, and with the server's "
          + "REDLOCKD_TLS_CLIENT_CA and REDLOCKD_TLS_KEY set, the server's own certificate and key).")
  String tlsClientCert;

  @Option(names = "--tls-client-key", defaultValue = "${env:REDLOCKD_HEALTHCHECK_TLS_CLIENT_KEY:-}",
      paramLabel = "<pem file>",
      description = "The PEM PKCS#8 private key of --tls-client-cert (default: REDLOCKD_HEALTHCHECK_TLS_CLIENT_KEY).")
  String tlsClientKey;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
  boolean help;

  /** Prints one line to {@code out} saying what the server answered; returns the exit code. */
  int run(PrintWriter out) {
    return run(out, System.getenv());
  }

  int run(PrintWriter out, Map<String, String> env) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("--port must lie in 1..65535, not " + port);
    }
    if (timeout.isZero()) {
      throw new IllegalArgumentException("--timeout must be positive");
    }
    String target = host + ":" + port;
    ManagedChannel channel = Grpc.newChannelBuilderForAddress(host, port, credentials(env)).build();
    try {
      ServingStatus status = HealthGrpc.newBlockingStub(channel)
          .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
          .check(HealthCheckRequest.newBuilder().setService("").build())
          .getStatus();
      out.println("redlockd at " + target + ": " + status);
      return status == ServingStatus.SERVING ? SERVING : NOT_HEALTHY;
    } catch (StatusRuntimeException e) {
      out.println("redlockd at " + target + ": " + failure(e));
      return NOT_HEALTHY;
    } finally {
      out.flush();
      channel.shutdownNow();
    }
  }

  /**
   * From the flags; under mutual TLS with no client certificate given, the server's own pair from
   * its environment, so that the check run inside the server's container needs no flag.
   */
  private ChannelCredentials credentials(Map<String, String> env) {
    Optional<Path> clientCert = file(tlsClientCert);
    Optional<Path> clientKey = file(tlsClientKey);
    if (clientCert.isEmpty() && clientKey.isEmpty() && file(env.get("REDLOCKD_TLS_CLIENT_CA")).isPresent()
        && file(tlsCert).isPresent()) {
      clientKey = file(env.get("REDLOCKD_TLS_KEY"));
      clientCert = clientKey.isPresent() ? file(tlsCert) : Optional.empty();
    }
    return ClientTls.credentials(file(tlsCert), file(tlsCa), clientCert, clientKey);
  }

  private static Optional<Path> file(String flag) {
    return flag == null || flag.isBlank() ? Optional.empty() : Optional.of(Path.of(flag));
  }

  private String failure(StatusRuntimeException e) {
    if (e.getStatus().getCode() == io.grpc.Status.Code.DEADLINE_EXCEEDED) {
      return "no answer within " + DurationFlag.format(timeout);
    }
    // "io exception" alone says little; its cause says "Connection refused" and the like.
    Throwable cause = e.getStatus().getCause();
    String why = cause != null && cause.getMessage() != null ? cause.getMessage() : e.getStatus().getDescription();
    return "unreachable, " + e.getStatus().getCode() + (why == null ? "" : " (" + why + ")");
  }
}
