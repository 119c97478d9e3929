package dev.redlockd.it.startup;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The server jar started with a configuration mistake: it exits 2 with one line on stderr that
 * names the flag or environment variable and the reason, before it contacts any Redis node.
 * "Any Redis node" is a listening socket standing in for one: a connection the server made,
 * however briefly, would still wait in its backlog when the test looks.
 */
class StartupErrorsTest {
  private ServerSocket fakeNode;

  private record Outcome(int exitCode, String stderr, String stdout) {}

  @BeforeEach
  void listenAsARedisNode() throws IOException {
    fakeNode = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
  }

  @AfterEach
  void close() throws IOException {
    fakeNode.close();
  }

  private String node() {
    return "redis://127.0.0.1:" + fakeNode.getLocalPort();
  }

  /**
   * Runs the jar to its exit with exactly these flags (no --port added: an environment variable
   * under test must not be overridden) and only these REDLOCKD_ variables set.
   */
  private static Outcome run(Map<String, String> env, String... flags) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"), "-jar", ServerProcess.jar().toString()));
    command.addAll(List.of(flags));
    Path stdout = Files.createTempFile("redlockd-startup", ".out");
    Path stderr = Files.createTempFile("redlockd-startup", ".err");
    ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
    builder.environment().keySet().removeIf(name -> name.startsWith("REDLOCKD_"));
    builder.environment().putAll(env);
    Process process = builder.start();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError("still running after 30 s: " + command + "\n" + Files.readString(stdout));
      }
      return new Outcome(process.exitValue(), Files.readString(stderr), Files.readString(stdout));
    } finally {
      Files.delete(stdout);
      Files.delete(stderr);
    }
  }

  private static Outcome run(String... flags) throws IOException, InterruptedException {
    return run(Map.of(), flags);
  }

  /** Exit 2, and exactly this one line on stderr. */
  private void assertRefused(Outcome outcome, String reason) throws IOException {
    assertThat(outcome.exitCode()).as(outcome.stderr() + outcome.stdout()).isEqualTo(2);
    assertThat(outcome.stderr()).isEqualTo("redlockd: " + reason + " (see --help)" + System.lineSeparator());
    assertNoNodeContacted();
  }

  private void assertNoNodeContacted() throws IOException {
    fakeNode.setSoTimeout(1);
    try (Socket contacted = fakeNode.accept()) {
      throw new AssertionError("the server connected to the Redis node before it refused to start: " + contacted);
    } catch (SocketTimeoutException expected) {
      // nothing in the backlog
    }
  }

  @Test
  void aRedisPortOutOfRangeIsRefused() throws Exception {
    assertRefused(run("--redis", node() + ",redis://127.0.0.1:99999"),
        "--redis: port 99999 is out of range 1..65535: redis://127.0.0.1:99999");
  }

  @Test
  void aDatabaseOtherThanZeroQueryParametersAndEmptyEntriesAreRefused() throws Exception {
    assertRefused(run("--redis", node() + "/99"), "--redis: redlockd uses database 0 only (release notices "
        + "go over pub/sub, which is not scoped by database, so another one would isolate nothing): remove '/99' "
        + "from " + node() + "; give each deployment its own --key-prefix instead");
    assertRefused(run("--redis", node() + "?db=2"), "--redis: a Redis URI takes no query parameters (?...) or "
        + "fragment (#...), they would be ignored: " + node() + "?...");
    assertRefused(run("--redis", node() + ",," + node().replace("127.0.0.1", "localhost")),
        "--redis: entry 2 of 3 is empty (two commas in a row, or one at an end)");
    // Database 0, written out, is what redlockd uses anyway: the one error left is checked after --redis.
    assertRefused(run("--redis", node() + "/0", "--max-streams", "-1"), "--max-streams must not be negative");
  }

  @Test
  void devModeIsAskedForNeverFallenInto() throws Exception {
    String advice = "give --redis redis://host:port,... (the Redis masters), or --dev for dev mode with local "
        + "Redis nodes";
    assertRefused(run(), "--redis is empty or not given: " + advice);
    assertRefused(run("--redis", ""), "--redis is empty or not given: " + advice);
    // REDLOCKD_REDIS=$REDIS_URLS with the shell variable unset.
    assertRefused(run(Map.of("REDLOCKD_REDIS", "")), "REDLOCKD_REDIS is empty or not given: " + advice);
    assertRefused(run("--dev", "--redis", node()),
        "--dev and --redis exclude each other: dev mode starts its own local Redis nodes");
    assertRefused(run(Map.of("REDLOCKD_DEV", "true", "REDLOCKD_REDIS", node())),
        "REDLOCKD_DEV and REDLOCKD_REDIS exclude each other: dev mode starts its own local Redis nodes");
  }

  @Test
  void aBadEnvironmentValueIsNamedByItsVariable() throws Exception {
    assertRefused(run(Map.of("REDLOCKD_PORT", "abc"), "--redis", node()), "REDLOCKD_PORT=abc: not a whole number");
    assertRefused(run("--redis", node(), "--port", "abc"), "--port abc: not a whole number");
    assertRefused(run(Map.of("REDLOCKD_PORT", "70000"), "--redis", node()),
        "REDLOCKD_PORT must lie in 0..65535, not 70000");
    assertRefused(run(Map.of("REDLOCKD_NODE_TIMEOUT", "soon"), "--redis", node()),
        "REDLOCKD_NODE_TIMEOUT=soon: not a duration: write it like 250ms, 10s, 5m or 1h");
    assertRefused(run(Map.of("REDLOCKD_REDIS", node() + "/2")), "REDLOCKD_REDIS: redlockd uses database 0 only "
        + "(release notices go over pub/sub, which is not scoped by database, so another one would isolate "
        + "nothing): remove '/2' from " + node() + "; give each deployment its own --key-prefix instead");
  }

  @Test
  void anUnknownLogLevelIsRefusedNotTurnedIntoDebug() throws Exception {
    for (String level : List.of("bogus", "WARNING")) {
      assertRefused(run(Map.of("REDLOCKD_LOG_LEVEL", level), "--redis", node()), "REDLOCKD_LOG_LEVEL=" + level
          + ": not a log level; use one of TRACE, DEBUG, INFO, WARN, ERROR or OFF");
    }
  }

  @Test
  void helpNamesEveryOptionsEnvironmentVariable() throws Exception {
    Outcome help = run("--help");
    assertThat(help.exitCode()).isZero();
    String text = help.stdout().replaceAll("\\s+", " ");
    for (String variable : List.of("REDLOCKD_BIND", "REDLOCKD_PORT", "REDLOCKD_REDIS", "REDLOCKD_DEV",
        "REDLOCKD_SHUTDOWN_GRACE", "REDLOCKD_METRICS_PORT", "REDLOCKD_LOG_LEVEL")) {
      assertThat(text).contains(variable);
    }
    assertThat(text).contains("(default 50051). Environment: REDLOCKD_PORT.");
  }

  @Test
  void aPortInUseIsNamedWithItsFlagBeforeAnyNodeIsContacted() throws Exception {
    try (ServerSocket taken = new ServerSocket(0)) { // every interface, as the server binds by default
      String port = Integer.toString(taken.getLocalPort());
      assertRefused(run("--redis", node(), "--port", port),
          "--port " + port + ": address already in use (on 0.0.0.0)");
      assertRefused(run("--redis", node(), "--port", "0", "--metrics-port", port),
          "--metrics-port " + port + ": address already in use (on 0.0.0.0)");
      assertRefused(run(Map.of("REDLOCKD_PORT", port), "--redis", node()),
          "REDLOCKD_PORT " + port + ": address already in use (on 0.0.0.0)");
    }
    int free;
    try (ServerSocket probe = new ServerSocket(0)) {
      free = probe.getLocalPort();
    }
    assertRefused(run("--redis", node(), "--port", Integer.toString(free), "--metrics-port", Integer.toString(free)),
        "--metrics-port must differ from --port (both " + free + ")");
  }

}
