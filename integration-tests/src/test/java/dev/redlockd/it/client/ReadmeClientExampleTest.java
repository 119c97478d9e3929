package dev.redlockd.it.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.testing.UntilAvailable;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Java example in README.md and in docs/clients.md is this module's code
 * (ReadmeClientExample), and it runs.
 */
class ReadmeClientExampleTest {
  private static final Path MODULE = Path.of(System.getProperty("user.dir"));

  @Test
  void readmeShowsTheExampleVerbatim() throws IOException {
    String source = Files.readString(MODULE.resolve(
        "src/test/java/dev/redlockd/it/client/ReadmeClientExample.java"));
    Matcher m = Pattern.compile("// README:client-example:begin\\n(.*?)\\n\\s*// README:client-example:end",
        Pattern.DOTALL).matcher(source);
    assertThat(m.find()).isTrue();
    String example = String.join("\n", dedent(m.group(1).lines().toList()));

    for (String page : List.of("README.md", "docs/clients.md")) {
      assertThat(Files.readString(MODULE.resolve("../" + page))).as(page + "'s Java client example")
          .contains("```java\n" + example + "\n```");
    }
  }

  @Test
  void theExampleRunsAgainstTheRealServer() throws Exception {
    try (LiveServer h = new LiveServer(3)) {
      ReadmeClientExample.Orders orders = new ReadmeClientExample.Orders();

      String report = ReadmeClientExample.run("127.0.0.1:" + h.server.port(), orders);

      assertThat(report).isEqualTo("report");
      assertThat(orders.accepted).containsExactly("42=paid");
      // Both locks were released: they can be taken again at once (ABORTED, held, fails here).
      // UNAVAILABLE says only that a round missed its nodes' timeout (a fresh-clone run, both
      // cores full), and is retried as every client retries it.
      for (String resource : List.of("orders/42", "jobs/nightly-report")) {
        assertThat(LiveServer.codeOf(() -> UntilAvailable.call(() -> h.acquire(resource, Duration.ofSeconds(1))))
            .getCode()).as(resource).isEqualTo(Status.Code.OK);
      }
    }
  }

  private static List<String> dedent(List<String> lines) {
    int indent = lines.stream().filter(l -> !l.isBlank())
        .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    return Arrays.stream(lines.toArray(String[]::new))
        .map(l -> l.isBlank() ? "" : l.substring(indent)).toList();
  }
}
