package dev.redlockd.it.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's election examples (Observe's channel, a leadership's Done / Err, Lead) in docs/clients.md
 * and clients/go/README.md are the parts of clients/go/cmd/redlockd-example/main.go between its
 * markers, verbatim: ClientExampleTest runs that program, so the pages show code that works.
 */
class GoExamplesQuotedTest {
  private final Path root = Runtimes.repositoryRoot();

  @ParameterizedTest
  @ValueSource(strings = {"README election example", "README lead example"})
  void pagesQuoteTheExampleProgram(String marker) throws IOException {
    Path program = root.resolve("clients/go/cmd/redlockd-example/main.go");
    Matcher m = Pattern.compile("// --- " + Pattern.quote(marker) + " begins ---\\n(.*?)\\n\\s*// --- "
        + Pattern.quote(marker) + " ends ---", Pattern.DOTALL).matcher(Files.readString(program));
    assertThat(m.find()).as(marker + " markers in " + program).isTrue();
    String example = String.join("\n", dedent(m.group(1).lines().toList()));
    for (String page : List.of("docs/clients.md", "clients/go/README.md")) {
      assertThat(Files.readString(root.resolve(page)))
          .as(page + "'s Go " + marker + ", quoted from " + root.relativize(program))
          .contains("```go\n" + example + "\n```");
    }
  }

  /** Removes the indentation every non-blank line shares (tabs, as gofmt writes them). */
  private static List<String> dedent(List<String> lines) {
    int indent = lines.stream().filter(l -> !l.isBlank())
        .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList();
  }
}
