package dev.redlockd.it.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The Java election example in docs/clients.md is ReadmeElectionExample, and it runs. */
class ReadmeElectionExampleTest {
  private static final Path MODULE = Path.of(System.getProperty("user.dir"));

  @Test
  void theClientsPageShowsTheExampleVerbatim() throws IOException {
    String source = Files.readString(MODULE.resolve("src/test/java/dev/redlockd/it/client/ReadmeElectionExample.java"));
    Matcher m = Pattern.compile("// README:election-example:begin\\n(.*?)\\n\\s*// README:election-example:end",
        Pattern.DOTALL).matcher(source);
    assertThat(m.find()).isTrue();
    List<String> lines = m.group(1).lines().toList();
    int indent = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
        .min().orElse(0);
    String example = String.join("\n", lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList());
    assertThat(Files.readString(MODULE.resolve("../docs/clients.md"))).as("docs/clients.md's Java election example")
        .contains("```java\n" + example + "\n```");
  }

  @Test
  void theExampleRunsAgainstTheRealServer() throws Exception {
    try (LiveServer h = new LiveServer(3)) {
      ReadmeElectionExample.Scheduler scheduler = new ReadmeElectionExample.Scheduler();

      var after = ReadmeElectionExample.run("127.0.0.1:" + h.server.port(), scheduler);

      assertThat(scheduler.ranWithTerm).hasSize(1);
      assertThat(scheduler.ranWithTerm.get(0)).isPositive();
      assertThat(scheduler.stopped).as("resigned, not lost").isFalse();
      // The watcher's first state is read from the nodes when its stream opens, which may be
      // before or after this candidate leads: then it sees "nobody" first, or not.
      // The resign's vacancy may reach it before it closes, or not.
      String me = "10.0.0.7:8080";
      assertThat(List.of(List.of(me), List.of("nobody", me), List.of(me, "nobody"), List.of("nobody", me, "nobody")))
          .as("what the watcher saw").contains(List.copyOf(scheduler.routedTo));
      assertThat(after).isEmpty();
    }
  }
}
