package dev.redlockd.it.conformance;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The Python section of docs/clients.md quotes, between {@code # --- docs example begins: NAME ---}
 * and {@code # --- docs example ends ---}, the examples of lead(), of the observation as an
 * iterator (clients/python/examples/election_example.py) and of the asyncio client
 * (clients/python/examples/aio_example.py), verbatim. This test checks the quotes and runs both
 * programs against a real server: they lead, observe themselves leading, resign, and the asyncio
 * one holds and releases its lock.
 */
@NeedsClientBuilds
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PythonDocsExamplesTest {
  private static final Pattern MARKED = Pattern.compile(
      "# --- docs example begins: (\\S+) ---\\n(.*?)\\n\\s*# --- docs example ends ---", Pattern.DOTALL);

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

  @Test
  void docsQuoteTheExamplesVerbatim() throws IOException {
    String page = Files.readString(root.resolve("docs/clients.md"));
    for (String example : List.of("election_example.py", "aio_example.py")) {
      List<String> quoted = marked(root.resolve("clients/python/examples/" + example));
      assertThat(quoted).as("docs markers in " + example).isNotEmpty();
      for (String block : quoted) {
        assertThat(page).as("docs/clients.md quotes " + example).contains("```python\n" + block + "\n```");
      }
    }
  }

  @Test
  void electionExampleLeadsObservesItselfAndResigns() throws Exception {
    String output = run("election_example.py");
    Matcher leading = Pattern.compile("(?m)^leading in term (\\d+)$").matcher(output);
    assertThat(leading.find()).as(output).isTrue();
    assertThat(output).contains("resigned after term " + leading.group(1), "observed: no leader");
    assertVacant("examples/python-election");
  }

  @Test
  void asyncioExampleHoldsReleasesLeadsAndObserves() throws Exception {
    String output = run("aio_example.py");
    assertThat(output).containsPattern("(?m)^acquired examples/python-aio: fencing token \\d+$").contains("released");
    Matcher leading = Pattern.compile("(?m)^leading in term (\\d+)$").matcher(output);
    assertThat(leading.find()).as(output).isTrue();
    assertThat(output).contains("observed: 10.0.0.7:8080", "resigned after term " + leading.group(1));
    assertVacant("examples/python-aio-election");
    // Released on its way out: free at once.
    LockServiceGrpc.LockServiceBlockingStub locks = LockServiceGrpc.newBlockingStub(server.channel());
    var lease = locks.acquire(acquireRequest("examples/python-aio", Duration.ofSeconds(5), Duration.ZERO, "")).getLease();
    locks.release(ReleaseRequest.newBuilder().setResource("examples/python-aio").setToken(lease.getToken()).build());
  }

  private String run(String example) throws Exception {
    ClientBuilds.assumeBuilt(Language.PYTHON);
    List<String> command = new ArrayList<>(Language.PYTHON.runner(root).subList(0, 1));
    command.addAll(List.of(root.resolve("clients/python/examples/" + example).toString(),
        "--server", "127.0.0.1:" + server.port()));
    try (RunnerProcess process = RunnerProcess.start(command, root)) {
      int exit = process.waitFor(Duration.ofSeconds(60));
      String output = process.transcript();
      assertThat(exit).as(output).isZero();
      return output;
    }
  }

  private void assertVacant(String election) {
    var elections = ElectionServiceGrpc.newBlockingStub(server.channel());
    assertThat(elections.leader(LeaderRequest.newBuilder().setElection(election).build()).hasLeader())
        .as(election + " vacant after the resign").isFalse();
  }

  /** The blocks between the docs markers, dedented as the page shows them. */
  private static List<String> marked(Path file) throws IOException {
    List<String> blocks = new ArrayList<>();
    Matcher m = MARKED.matcher(Files.readString(file));
    while (m.find()) {
      List<String> lines = m.group(2).lines().toList();
      int indent = lines.stream().filter(l -> !l.isBlank())
          .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
      blocks.add(String.join("\n", lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList()));
    }
    return blocks;
  }
}
