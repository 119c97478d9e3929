package dev.redlockd.it.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Node entries are told apart by what they reach, not by how they are written. */
class NodeIdentityStartupTest {

  private record Outcome(int exitCode, String stderr, String stdout) {}

  private static Outcome run(String redis) throws IOException, InterruptedException {
    Path out = Files.createTempFile("redlockd-identity", ".out");
    Path err = Files.createTempFile("redlockd-identity", ".err");
    Process process = new ProcessBuilder(ServerProcess.command(List.of(), List.of("--redis", redis)))
        .redirectOutput(out.toFile())
        .redirectError(err.toFile())
        .start();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("the server started although " + redis + " names one node twice:\n"
          + Files.readString(out));
    }
    return new Outcome(process.exitValue(), Files.readString(err, StandardCharsets.UTF_8).strip(),
        Files.readString(out, StandardCharsets.UTF_8));
  }

  @Test
  void oneAddressWrittenTwoWaysStopsStartUpBeforeAnyNodeIsContacted() throws Exception {
    AtomicInteger contacted = new AtomicInteger();
    try (ServerSocket node = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        RedisCluster other = RedisCluster.start(1)) {
      Thread acceptor = new Thread(() -> {
        while (!node.isClosed()) {
          try (Socket ignored = node.accept()) {
            contacted.incrementAndGet();
          } catch (IOException closed) {
            return;
          }
        }
      });
      acceptor.setDaemon(true);
      acceptor.start();
      int port = node.getLocalPort();
      Outcome outcome = run("redis://localhost:" + port + "," + other.uris().get(0) + ",redis://127.0.0.1:" + port);

      assertThat(outcome.exitCode()).as(outcome.stdout()).isEqualTo(2);
      assertThat(outcome.stderr()).doesNotContain("\n")
          .startsWith("redlockd: --redis names one Redis node twice: redis://localhost:" + port
              + " and redis://127.0.0.1:" + port);
      assertThat(contacted.get()).isZero();
    }
  }

  @Test
  void oneInstanceReachedThroughTwoAddressesStopsStartUp() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(2)) {
      cluster.call(0, "CONFIG", "SET", "bind", "127.0.0.1 127.0.0.2");
      int port = cluster.node(0).port();
      String runId = ((String) cluster.call(0, "INFO", "server")).lines()
          .filter(l -> l.startsWith("run_id:")).findFirst().orElseThrow().substring("run_id:".length()).strip();

      Outcome outcome = run("redis://127.0.0.1:" + port + "," + cluster.uris().get(1) + ",redis://127.0.0.2:" + port);

      assertThat(outcome.exitCode()).as(outcome.stdout()).isEqualTo(2);
      assertThat(outcome.stderr()).doesNotContain("\n")
          .startsWith("redlockd: --redis names one Redis instance twice: ")
          .contains("redis://127.0.0.1:" + port).contains("redis://127.0.0.2:" + port).contains(runId);
      assertThat(outcome.stdout()).doesNotContain("redlockd listening");
    }
  }
}
