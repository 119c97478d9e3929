package dev.redlockd.it.conformance;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each language's example (the program its README section quotes) against the real server: it
 * exits 0, really holds the lock while it runs, prints its fencing token and never its token,
 * and leaves the lock free. The Java example is ReadmeClientExampleTest's. Node's election
 * example has its own test here (Go's example program campaigns too, in the same run).
 */
@NeedsClientBuilds
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientExampleTest {
  private static final Pattern ACQUIRED = Pattern.compile("(?m)^acquired (\\S+): fencing token (\\d+)");

  private final Path root = Runtimes.repositoryRoot();
  private RedisCluster cluster;
  private ServerProcess server;

  @BeforeAll
  void start() {
    cluster = RedisCluster.start(3);
    server = ServerProcess.start("--redis", cluster.redisFlag());
  }

  @AfterAll
  void stop() throws InterruptedException {
    try {
      if (server != null) {
        server.close();
      }
    } finally {
      if (cluster != null) {
        cluster.close();
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = Language.class, names = {"PYTHON", "NODE", "GO"})
  void exampleAcquiresHoldsAndReleasesWithoutPrintingTheToken(Language language) throws Exception {
    ClientBuilds.assumeBuilt(language);
    String resource = "examples/" + language.id;
    String key = "redlock:{" + resource + "}:lock";
    LockServiceGrpc.LockServiceBlockingStub other = LockServiceGrpc.newBlockingStub(server.channel());
    Set<String> tokens = new HashSet<>();
    boolean refused = false;
    try (RunnerProcess example = RunnerProcess.start(language.example(root, "127.0.0.1:" + server.port()), root)) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (example.isAlive() && System.nanoTime() < deadline) {
        String token = cluster.lockHolder(0, key);
        if (token != null) {
          tokens.add(token);
          if (!refused) {
            Status status = codeOf(() -> other.acquire(acquireRequest(resource, Duration.ofSeconds(5), Duration.ZERO, "")));
            // The example may release between the read and this Acquire; then it is granted.
            if (status.getCode() == Status.Code.ABORTED) {
              refused = true;
            } else if (status.isOk()) {
              break;
            }
          }
        }
        Thread.sleep(20);
      }
      int exit = example.waitFor(Duration.ofSeconds(60));
      String output = example.transcript();
      assertThat(exit).as(output).isZero();
      assertThat(refused).as("another Acquire was refused while the example held the lock:\n" + output).isTrue();
      Matcher acquired = ACQUIRED.matcher(output);
      assertThat(acquired.find()).as(output).isTrue();
      assertThat(acquired.group(1)).isEqualTo(resource);
      assertThat(output).contains("released");
      assertThat(tokens).isNotEmpty();
      for (String token : tokens) {
        assertThat(output).doesNotContain(token);
      }
    }
    // Released on its way out, not left to run out: free at once.
    var lease = other.acquire(acquireRequest(resource, Duration.ofSeconds(5), Duration.ZERO, "")).getLease();
    other.release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build());
  }

  /**
   * Node's election example (clients/node/examples/election-example.mjs, quoted by its README):
   * it leads, its observer sees it lead, the proclaimed value is what Leader reports, and it
   * resigns, leaving the election vacant.
   */
  @Test
  void nodeElectionExampleLeadsProclaimsAndResigns() throws Exception {
    ClientBuilds.assumeBuilt(Language.NODE);
    List<String> command = List.of("node", root.resolve("clients/node/examples/election-example.mjs").toString(),
        "--server", "127.0.0.1:" + server.port());
    try (RunnerProcess example = RunnerProcess.start(command, root)) {
      int exit = example.waitFor(Duration.ofSeconds(60));
      String output = example.transcript();
      assertThat(exit).as(output).isZero();
      Matcher leading = Pattern.compile("(?m)^leading in term (\\d+)$").matcher(output);
      assertThat(leading.find()).as(output).isTrue();
      String term = leading.group(1);
      assertThat(output).as("its observer saw it lead, then saw the vacancy")
          .contains("observed: 10.0.0.7:8080 leads in term " + term, "observed: no leader", "resigned")
          .contains("\"value\":\"10.0.0.7:9090\"", "\"term\":\"" + term + "\"");
    }
    var elections = ElectionServiceGrpc.newBlockingStub(server.channel());
    assertThat(elections.leader(LeaderRequest.newBuilder().setElection("examples/scheduler").build())
        .hasLeader()).as("vacant after the resign").isFalse();
  }
}
