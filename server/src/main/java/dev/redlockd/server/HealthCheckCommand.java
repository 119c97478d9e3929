package dev.redlockd.server;

import dev.redlockd.server.tls.ClientTls;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code redlockd healthcheck}: asks a running server's {@code grpc.health.v1.Health/Check}
 * (service "") once, for container health checks and scripts. Exit 0 only when it says
 * SERVING; any other answer, no answer or no connection is 1.
 *
 * <p>It takes the server's own flags and {@code REDLOCKD_*} variables (the same parser: the
 * server's options are mixed in), and reads the port, the address it listens on and its TLS
 * files from them, so that the check given what the server was given reaches it. With
 * {@code --server-pid} it reads them from the running server process itself.
 */
@Command(name = "healthcheck", sortOptions = false,
    customSynopsis = "redlockd healthcheck [--server-pid=<pid> | <the server's flags>] [--host=<host>] "
        + "[--timeout=<timeout>] [--tls-ca=<pem file>] [--tls-client-cert=<pem file> --tls-client-key=<pem file>]",
    description = "Asks a running redlockd whether it is SERVING (a quorum of Redis nodes votes): exit 0 if so, "
        + "1 otherwise (NOT_SERVING, unreachable, no answer within --timeout), 2 for a bad flag. Give it the "
        + "server's flags (or REDLOCKD_* variables), or --server-pid to read them from the server process.")
final class HealthCheckCommand {
  static final int SERVING = 0;
  static final int NOT_HEALTHY = 1;

  @Option(names = "--server-pid", paramLabel = "<pid>",
      description = "Read the server's flags and REDLOCKD_* variables from this running server process (Linux "
          + "/proc; or the one server among the processes it started, as under an init process), instead of "
          + "from the check's own: a container's HEALTHCHECK gives 1.")
  Long serverPid;

  @Option(names = "--host", paramLabel = "<host>",
      description = "The host to dial (default: the server's --bind address, or loopback when it binds every "
          + "interface).")
  String host;

  @Option(names = "--timeout", defaultValue = "2s", converter = DurationFlag.class,
      description = "How long to wait for the answer, connecting included (default ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(names = "--tls-ca", defaultValue = "${env:REDLOCKD_HEALTHCHECK_TLS_CA:-}", paramLabel = "<pem file>",
      description = "Trust the authorities in this PEM bundle instead of exactly the server's --tls-cert; the "
          + "server's certificate must then name --host (default: REDLOCKD_HEALTHCHECK_TLS_CA).")
  String tlsCa;

  @Option(names = "--tls-client-cert", defaultValue = "${env:REDLOCKD_HEALTHCHECK_TLS_CLIENT_CERT:-}",
      paramLabel = "<pem file>",
      description = "For a server with --tls-client-ca (mutual TLS): the client certificate chain to show; needs "
          + "--tls-client-key (default: REDLOCKD_HEALTHCHECK_TLS_CLIENT_CERT; without it, the server's own "
          + "--tls-cert and --tls-key).")
  String tlsClientCert;

  @Option(names = "--tls-client-key", defaultValue = "${env:REDLOCKD_HEALTHCHECK_TLS_CLIENT_KEY:-}",
      paramLabel = "<pem file>",
      description = "The PEM PKCS#8 private key of --tls-client-cert (default: REDLOCKD_HEALTHCHECK_TLS_CLIENT_KEY).")
  String tlsClientKey;

  /** The server's flags, their variables as defaults: where and how the server listens (after ours in --help). */
  @Mixin
  ServerConfig server = new ServerConfig();

  @Spec
  CommandSpec spec;

  /**
   * Prints one line to {@code out} saying what the server answered; returns the exit code.
   * Throws IllegalArgumentException with a one-line reason for a bad flag.
   */
  int run(PrintWriter out) {
    ServerConfig target = server;
    if (serverPid != null) {
      Set<String> given = serverFlagsGiven();
      if (!given.isEmpty()) {
        throw new IllegalArgumentException("--server-pid reads the server's flags from the server process: give "
            + "the check none of them (" + String.join(", ", given) + ")");
      }
      target = RunningServer.find(serverPid).config();
    }
    if (target.port == 0) {
      throw new IllegalArgumentException("the server runs with --port 0, a free port it picks at start-up and "
          + "logs: give the check --port with that port");
    }
    if (target.port < 1 || target.port > 65535) {
      throw new IllegalArgumentException("--port must lie in 1..65535, not " + target.port);
    }
    if (timeout.isZero()) {
      throw new IllegalArgumentException("--timeout must be positive");
    }
    String dialled = host != null ? host : dialled(target.bindAddress());
    int port = target.port;
    String where = "redlockd at " + (dialled.contains(":") ? "[" + dialled + "]" : dialled) + ":" + port + ": ";
    boolean tls = file(target.tlsCert).isPresent() || file(tlsCa).isPresent();
    long start = System.nanoTime();
    ManagedChannel channel = Grpc.newChannelBuilderForAddress(dialled, port, credentials(target)).build();
    try {
      ServingStatus status = check(channel, timeout);
      out.println(where + status);
      return status == ServingStatus.SERVING ? SERVING : NOT_HEALTHY;
    } catch (StatusRuntimeException e) {
      Duration left = timeout.minusNanos(System.nanoTime() - start);
      out.println(where + failure(e) + mismatch(e, tls, dialled, port, left));
      return NOT_HEALTHY;
    } finally {
      out.flush();
      channel.shutdownNow();
    }
  }

  private static ServingStatus check(ManagedChannel channel, Duration timeout) {
    return HealthGrpc.newBlockingStub(channel)
        .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
        .check(HealthCheckRequest.newBuilder().setService("").build())
        .getStatus();
  }

  /** Where a server that listens on {@code bind} is reached from its own machine. */
  private static String dialled(InetAddress bind) {
    if (!bind.isAnyLocalAddress()) {
      return bind.getHostAddress();
    }
    return bind.getAddress().length == 4 ? "127.0.0.1" : "::1";
  }

  /**
   * From the server's TLS flags; under mutual TLS with no client certificate given, the
   * server's own pair, so that the check run beside the server needs nothing more.
   */
  private ChannelCredentials credentials(ServerConfig target) {
    Optional<Path> serverCert = file(target.tlsCert);
    Optional<Path> clientCert = file(tlsClientCert);
    Optional<Path> clientKey = file(tlsClientKey);
    if (clientCert.isEmpty() && clientKey.isEmpty() && file(target.tlsClientCa).isPresent() && serverCert.isPresent()) {
      clientKey = file(target.tlsKey);
      clientCert = clientKey.isPresent() ? serverCert : Optional.empty();
    }
    return ClientTls.credentials(serverCert, file(tlsCa), clientCert, clientKey);
  }

  /** The server flags given on the check's own command line (help and version aside). */
  private Set<String> serverFlagsGiven() {
    Set<String> serverFlags = ServerConfig.commandLine(new ServerConfig()).getCommandSpec().options().stream()
        .filter(o -> !o.usageHelp() && !o.versionHelp())
        .flatMap(o -> List.of(o.names()).stream())
        .collect(Collectors.toSet());
    return spec.commandLine().getParseResult().matchedOptions().stream()
        .map(OptionSpec::longestName)
        .filter(serverFlags::contains)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static Optional<Path> file(String flag) {
    return flag == null || flag.isBlank() ? Optional.empty() : Optional.of(Path.of(flag));
  }

  private String failure(StatusRuntimeException e) {
    if (e.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED) {
      return "no answer within " + DurationFlag.format(timeout);
    }
    // "io exception" alone says little; its cause says "Connection refused" and the like.
    Throwable cause = e.getStatus().getCause();
    String why = cause != null && cause.getMessage() != null ? cause.getMessage() : e.getStatus().getDescription();
    return "unreachable, " + e.getStatus().getCode() + (why == null ? "" : " (" + why + ")");
  }

  /**
   * A hint when the check and the server disagree about TLS, found by asking the port the
   * other way round within what is left of the timeout; empty otherwise.
   */
  private static String mismatch(StatusRuntimeException e, boolean tls, String host, int port, Duration left) {
    if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || left.isNegative() || left.isZero()
        || refused(e.getStatus().getCause())) {
      return "";
    }
    if (!tls) {
      return TlsProbe.speaksTls(host, port, left)
          ? "; the server speaks TLS: give the check the server's --tls-cert (or REDLOCKD_TLS_CERT), or --tls-ca"
          : "";
    }
    ManagedChannel plaintext = Grpc.newChannelBuilderForAddress(host, port, InsecureChannelCredentials.create())
        .build();
    try {
      check(plaintext, left);
      return "; the server speaks plaintext: the check was given TLS (--tls-cert, --tls-ca or their variables) "
          + "that the server does not serve";
    } catch (StatusRuntimeException other) {
      return "";
    } finally {
      plaintext.shutdownNow();
    }
  }

  private static boolean refused(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof java.net.ConnectException) {
        return true;
      }
    }
    return false;
  }
}
