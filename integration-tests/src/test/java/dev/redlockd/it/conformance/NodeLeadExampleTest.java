package dev.redlockd.it.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Node's run-while-leader example (clients/node/examples/lead-example.mjs): docs/clients.md's
 * Node section quotes its observe, lead and signal parts verbatim, and it runs against the real
 * server: it leads, writes its batches in one term, its observer (an async iterable) sees it
 * lead and then the vacancy, and lead() resigns when the work returns.
 */
@NeedsClientBuilds
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NodeLeadExampleTest {
  private final Path root = Runtimes.repositoryRoot();
  private final Path example = root.resolve("clients/node/examples/lead-example.mjs");
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
  @ValueSource(strings = {"observe", "lead", "signal"})
  void docsQuoteThePartVerbatim(String part) throws IOException {
    Matcher m = Pattern.compile("// --- " + part + " example begins ---\\n(.*?)\\n\\s*// --- " + part
        + " example ends ---", Pattern.DOTALL).matcher(Files.readString(example));
    assertThat(m.find()).as(part + " markers in " + example).isTrue();
    String quoted = String.join("\n", dedent(m.group(1).lines().toList()));
    assertThat(Files.readString(root.resolve("docs/clients.md")))
        .as("docs/clients.md's Node " + part + " example, quoted from " + root.relativize(example))
        .contains("```js\n" + quoted + "\n```");
  }

  @Test
  void leadsWritesItsBatchesInOneTermAndResigns() throws Exception {
    ClientBuilds.assumeBuilt(Language.NODE);
    List<String> command = List.of("node", example.toString(), "--server", "127.0.0.1:" + server.port());
    try (RunnerProcess run = RunnerProcess.start(command, root)) {
      int exit = run.waitFor(Duration.ofSeconds(60));
      String output = run.transcript();
      assertThat(exit).as(output).isZero();
      Matcher leading = Pattern.compile("(?m)^leading in term (\\d+)$").matcher(output);
      assertThat(leading.find()).as(output).isTrue();
      String term = leading.group(1);
      assertThat(output).as(output)
          .contains("batch 1 written in term " + term, "batch 2 written in term " + term,
              "batch 3 written in term " + term, "resigned after 3 batches", "leader now: none");
      int led = output.indexOf("observed: 10.0.0.7:8080 leads in term " + term);
      assertThat(led).as("its observer saw it lead:\n" + output).isNotNegative();
      assertThat(output.lastIndexOf("observed: no leader")).as("then the vacancy:\n" + output).isGreaterThan(led);
    }
    var elections = ElectionServiceGrpc.newBlockingStub(server.channel());
    assertThat(elections.leader(LeaderRequest.newBuilder().setElection("examples/jobs").build()).hasLeader())
        .as("vacant after the resign").isFalse();
  }

  /** Removes the indentation every non-blank line shares. */
  private static List<String> dedent(List<String> lines) {
    int indent = lines.stream().filter(l -> !l.isBlank())
        .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList();
  }
}
