package dev.redlockd.it.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.server.Main;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import dev.redlockd.testing.TestCertificates;
import dev.redlockd.testing.TestCertificates.Authority;
import dev.redlockd.testing.TestCertificates.Issued;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar redlockd-server.jar healthcheck}: given the server's own flags or variables,
 * or reading them from the server process, it reaches a plaintext, TLS and mutual-TLS server,
 * and the Dockerfile's HEALTHCHECK line, run as a process, passes against servers configured by
 * flags and by variables. One Redis cluster and one server per configuration serve every case;
 * most checks run in this JVM through {@code Main.run} (what main runs, with an environment of
 * the test's choosing), and only what needs a process (exit codes, the Dockerfile's line) is one.
 */
class HealthCheckCommandTest {
  private static final Path ROOT = Path.of(System.getProperty("user.dir")).resolve("..").normalize();
  /** Generous: a cold check on a loaded machine can take more than the 2 s default to get its answer. */
  private static final String TIMEOUT = "10s";

  @TempDir
  static Path dir;

  private static RedisCluster cluster;
  private static Issued serverCert;
  private static Issued mutualCert;
  private static Authority ca;
  /** Plaintext, its port picked at start-up (--port 0). */
  private static ServerProcess plain;
  /** TLS, configured by flags; its certificate names no address the check dials. */
  private static ServerProcess tls;
  private static List<String> tlsFlags;
  /** Mutual TLS, configured by variables, as in a container's environment. */
  private static ServerProcess mutual;
  private static Map<String, String> mutualEnv;

  @BeforeAll
  static void startServers() throws IOException {
    cluster = RedisCluster.start(3);
    ca = TestCertificates.authority(dir, "healthcheck CA");
    serverCert = ca.issue("redlockd", "redlockd.example.com");
    mutualCert = ca.issue("redlockd", "127.0.0.1");
    tlsFlags = List.of("--port", Integer.toString(freePort()),
        "--tls-cert", serverCert.cert().toString(), "--tls-key", serverCert.key().toString());
    List<String> flags = new ArrayList<>(tlsFlags);
    flags.addAll(List.of("--redis", cluster.redisFlag()));
    mutualEnv = Map.of("REDLOCKD_PORT", Integer.toString(freePort()), "REDLOCKD_REDIS", cluster.redisFlag(),
        "REDLOCKD_TLS_CERT", mutualCert.cert().toString(), "REDLOCKD_TLS_KEY", mutualCert.key().toString(),
        "REDLOCKD_TLS_CLIENT_CA", ca.cert().toString());
    // The first makes the new cluster; the other two start side by side once it has (two servers
    // at once could each find the other's half-made cluster).
    CompletableFuture<ServerProcess> plainStart =
        CompletableFuture.supplyAsync(() -> ServerProcess.start("--redis", cluster.redisFlag()));
    CompletableFuture<ServerProcess> tlsStart =
        plainStart.thenApplyAsync(first -> ServerProcess.start(List.of(), flags, Map.of()));
    // --port as in the environment: ServerProcess's default --port 0 would win over the variable.
    CompletableFuture<ServerProcess> mutualStart = plainStart.thenApplyAsync(first ->
        ServerProcess.start(List.of(), List.of("--port", mutualEnv.get("REDLOCKD_PORT")), mutualEnv));
    CompletableFuture.allOf(plainStart, tlsStart, mutualStart).exceptionally(e -> null).join();
    plain = plainStart.isCompletedExceptionally() ? null : plainStart.join();
    tls = tlsStart.isCompletedExceptionally() ? null : tlsStart.join();
    mutual = mutualStart.isCompletedExceptionally() ? null : mutualStart.join();
    CompletableFuture.allOf(plainStart, tlsStart, mutualStart).join(); // a failure: stopServers stops the rest
  }

  @AfterAll
  static void stopServers() throws InterruptedException {
    for (ServerProcess server : new ServerProcess[] {plain, tls, mutual}) {
      if (server != null) {
        server.close();
      }
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private record Outcome(int exitCode, String output) {}

  /** {@code healthcheck <args>} in this JVM, with this environment instead of the test's own. */
  private static Outcome check(Map<String, String> env, String... args) {
    StringWriter out = new StringWriter();
    List<String> command = new ArrayList<>(List.of("healthcheck"));
    command.addAll(Arrays.asList(args));
    int code = Main.run(command, new PrintWriter(out), new PrintWriter(out), env);
    return new Outcome(code, out.toString().strip());
  }

  private static Outcome check(String... args) {
    return check(Map.of(), args);
  }

  private static Outcome process(List<String> command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("%s ended", command).isTrue();
    return new Outcome(process.exitValue(),
        new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
  }

  /**
   * The Dockerfile's HEALTHCHECK command against the server process {@code pid}, as Docker runs it
   * beside the server, with the jar the build made.
   */
  private static List<String> dockerfileCheck(long pid) throws IOException {
    Matcher cmd = Pattern.compile("(?m)^HEALTHCHECK .*\\\\\\n\\s*CMD (.*?) \\|\\| exit 1$")
        .matcher(Files.readString(ROOT.resolve("Dockerfile")));
    assertThat(cmd.find()).as("the Dockerfile's HEALTHCHECK ... CMD <check> || exit 1").isTrue();
    List<String> command = new ArrayList<>();
    for (String word : cmd.group(1).split(" ")) {
      command.add(switch (word) {
        case "java" -> Path.of(System.getProperty("java.home"), "bin", "java").toString();
        case "/app/redlockd-server.jar" -> ServerProcess.jar().toString();
        default -> word;
      });
    }
    assertThat(command).contains("--server-pid");
    int serverPid = command.indexOf("--server-pid");
    assertThat(command.subList(serverPid, serverPid + 2)).as("the HEALTHCHECK reads the server's flags from PID 1")
        .containsExactly("--server-pid", "1");
    command.set(serverPid + 1, Long.toString(pid));
    return command;
  }

  private static String at(ServerProcess server) {
    return "redlockd at 127.0.0.1:" + server.port() + ": ";
  }

  @Test
  void theDockerfilesCheckPassesWhetherTheServerWasGivenFlagsOrVariables() throws Exception {
    Outcome flags = process(dockerfileCheck(tls.pid()));
    assertThat(flags.exitCode()).as(flags.output()).isZero();
    assertThat(flags.output()).isEqualTo(at(tls) + "SERVING");
    Outcome variables = process(dockerfileCheck(mutual.pid()));
    assertThat(variables.exitCode()).as(variables.output()).isZero();
    assertThat(variables.output()).isEqualTo(at(mutual) + "SERVING");
  }

  @Test
  void takesThePortFromTheServersFlagOrVariable() {
    String port = Integer.toString(plain.port());
    Outcome flag = check("--port", port, "--timeout", TIMEOUT);
    assertThat(flag).isEqualTo(new Outcome(0, at(plain) + "SERVING"));
    assertThat(check(Map.of("REDLOCKD_PORT", port), "--timeout", TIMEOUT)).isEqualTo(flag);
    // Every server flag is taken, those the check does not need too.
    assertThat(check("--redis", cluster.redisFlag(), "--port", port, "--node-timeout", "80ms", "--timeout", TIMEOUT))
        .isEqualTo(flag);
    assertThat(check("--port", port, "--host", "localhost", "--timeout", TIMEOUT).output())
        .isEqualTo("redlockd at localhost:" + port + ": SERVING");
    assertThat(check("--port", port, "--bind", "127.0.0.1", "--timeout", TIMEOUT)).isEqualTo(flag);
  }

  @Test
  void exitsOneWhileAMajorityOfNodesIsGone() {
    String port = Integer.toString(plain.port());
    cluster.pause(0, 1);
    try {
      await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200))
          .until(() -> check("--port", port, "--timeout", TIMEOUT).exitCode() == 1);
      assertThat(check("--port", port, "--timeout", TIMEOUT)).isEqualTo(new Outcome(1, at(plain) + "NOT_SERVING"));
    } finally {
      cluster.resume(0, 1);
    }
    // Every server serves again before the next case uses it.
    String[] tlsCheck = concat(tlsFlags.toArray(String[]::new), "--timeout", TIMEOUT);
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200))
        .until(() -> check("--port", port, "--timeout", TIMEOUT).exitCode() == 0
            && check(tlsCheck).exitCode() == 0 && check(mutualEnv, "--timeout", TIMEOUT).exitCode() == 0);
  }

  @Test
  void speaksTlsGivenTheServersTlsFlagsOrVariables() {
    String[] flags = tlsFlags.toArray(String[]::new);
    Outcome sameFlags = check(concat(flags, "--timeout", TIMEOUT));
    assertThat(sameFlags).isEqualTo(new Outcome(0, at(tls) + "SERVING"));
    Map<String, String> variables = Map.of("REDLOCKD_PORT", Integer.toString(tls.port()),
        "REDLOCKD_TLS_CERT", serverCert.cert().toString(), "REDLOCKD_TLS_KEY", serverCert.key().toString());
    assertThat(check(variables, "--timeout", TIMEOUT)).isEqualTo(sameFlags);
    assertThat(check("--server-pid", Long.toString(tls.pid()), "--timeout", TIMEOUT)).isEqualTo(sameFlags);

    // Trusting exactly the server's certificate: another one fails. Trusting the authority
    // checks the name, and this certificate does not name the address dialled.
    Issued other = ca.issue("other", "127.0.0.1");
    String port = Integer.toString(tls.port());
    assertThat(check("--port", port, "--tls-cert", other.cert().toString(), "--timeout", TIMEOUT).exitCode())
        .isEqualTo(1);
    assertThat(check("--port", port, "--tls-ca", ca.cert().toString(), "--timeout", TIMEOUT).exitCode())
        .isEqualTo(1);
  }

  @Test
  void aTlsMismatchSaysSo() {
    Outcome plaintextToTls = check("--port", Integer.toString(tls.port()), "--timeout", TIMEOUT);
    assertThat(plaintextToTls.exitCode()).isEqualTo(1);
    assertThat(plaintextToTls.output()).startsWith(at(tls) + "unreachable, UNAVAILABLE")
        .endsWith("; the server speaks TLS: give the check the server's --tls-cert (or REDLOCKD_TLS_CERT), "
            + "or --tls-ca");

    Outcome tlsToPlaintext = check("--port", Integer.toString(plain.port()), "--tls-cert",
        serverCert.cert().toString(), "--timeout", TIMEOUT);
    assertThat(tlsToPlaintext.exitCode()).isEqualTo(1);
    assertThat(tlsToPlaintext.output()).startsWith(at(plain) + "unreachable, UNAVAILABLE").endsWith(
        "; the server speaks plaintext: the check was given TLS (--tls-cert, --tls-ca or their variables) that "
            + "the server does not serve");
  }

  @Test
  void speaksMutualTlsWithAClientCertificateOrTheServersOwn() {
    String port = Integer.toString(mutual.port());
    Issued client = ca.issue("healthcheck");
    Outcome withClientCertificate = check("--port", port, "--timeout", TIMEOUT, "--tls-ca", ca.cert().toString(),
        "--tls-client-cert", client.cert().toString(), "--tls-client-key", client.key().toString());
    assertThat(withClientCertificate).isEqualTo(new Outcome(0, at(mutual) + "SERVING"));
    // Beside the server: its own certificate and key, which the client CA signed.
    assertThat(check(mutualEnv, "--timeout", TIMEOUT)).isEqualTo(withClientCertificate);
    assertThat(check("--server-pid", Long.toString(mutual.pid()), "--timeout", TIMEOUT))
        .as("read from the server process's environment").isEqualTo(withClientCertificate);

    Outcome withoutClientCertificate = check("--port", port, "--timeout", TIMEOUT,
        "--tls-cert", mutualCert.cert().toString());
    assertThat(withoutClientCertificate.exitCode()).as(withoutClientCertificate.output()).isEqualTo(1);
    Issued stranger = TestCertificates.authority(dir, "another CA").issue("stranger");
    Outcome strangersCertificate = check("--port", port, "--timeout", TIMEOUT,
        "--tls-cert", mutualCert.cert().toString(),
        "--tls-client-cert", stranger.cert().toString(), "--tls-client-key", stranger.key().toString());
    assertThat(strangersCertificate.exitCode()).as(strangersCertificate.output()).isEqualTo(1);

    Outcome halfAPair = check("--port", port, "--tls-client-cert", client.cert().toString());
    assertThat(halfAPair.exitCode()).isEqualTo(2);
    assertThat(halfAPair.output()).contains("--tls-client-cert needs --tls-client-key").doesNotContain("\n");
  }

  @Test
  void aServerPidThatCannotBeCheckedIsABadFlag() {
    Outcome portZero = check("--server-pid", Long.toString(plain.pid()));
    assertThat(portZero.exitCode()).isEqualTo(2);
    assertThat(portZero.output()).isEqualTo("redlockd: the server runs with --port 0, a free port it picks at "
        + "start-up and logs: give the check --port with that port (see --help)");

    Outcome withFlags = check("--server-pid", Long.toString(tls.pid()), "--port", "1");
    assertThat(withFlags.exitCode()).isEqualTo(2);
    assertThat(withFlags.output()).contains("give the check none of them (--port)");

    // This JVM started the three servers (and, in the suite, the servers of the class that runs
    // beside this one): which one is meant?
    Outcome several = check("--server-pid", Long.toString(ProcessHandle.current().pid()));
    assertThat(several.exitCode()).isEqualTo(2);
    assertThat(several.output()).containsPattern("it started \\d+ redlockd servers")
        .contains(Long.toString(plain.pid()), Long.toString(tls.pid()));

    Outcome notAServer = check("--server-pid", Long.toString(cluster.node(0).pid()));
    assertThat(notAServer.exitCode()).isEqualTo(2);
    assertThat(notAServer.output()).contains("neither it nor any process it started runs the redlockd server");
  }

  @Test
  void exitsOneWhenNothingListensOrNothingAnswersWithinTheTimeout() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    Outcome refused = check("--port", Integer.toString(closedPort));
    assertThat(refused.exitCode()).isEqualTo(1);
    assertThat(refused.output()).startsWith("redlockd at 127.0.0.1:" + closedPort + ": unreachable, UNAVAILABLE")
        .contains("Connection refused").doesNotContain("\n");

    // A socket that takes the connection (the backlog does) and never speaks HTTP/2.
    try (ServerSocket silent = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      long start = System.nanoTime();
      Outcome unanswered = check("--port", Integer.toString(silent.getLocalPort()), "--timeout", "500ms");
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertThat(unanswered).isEqualTo(
          new Outcome(1, "redlockd at 127.0.0.1:" + silent.getLocalPort() + ": no answer within 500ms"));
      // gRPC sets no deadline of its own: without --timeout the check would wait for ever.
      assertThat(millis).isBetween(500L, 10_000L);
    }
  }

  @Test
  void badFlagsExitTwoWithAReason() {
    Outcome badTimeout = check("--timeout", "soon");
    assertThat(badTimeout.exitCode()).isEqualTo(2);
    assertThat(badTimeout.output()).startsWith("redlockd: ").contains("soon").doesNotContain("\n");

    // Server flags before the word would otherwise be ignored and the default port checked.
    StringWriter err = new StringWriter();
    assertThat(Main.run(List.of("--port", "6000", "healthcheck"), new PrintWriter(err), new PrintWriter(err),
        Map.of())).isEqualTo(2);
    assertThat(err.toString()).contains("healthcheck takes its flags after the word healthcheck");
  }

  private static String[] concat(String[] first, String... more) {
    List<String> all = new ArrayList<>(Arrays.asList(first));
    all.addAll(Arrays.asList(more));
    return all.toArray(String[]::new);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
