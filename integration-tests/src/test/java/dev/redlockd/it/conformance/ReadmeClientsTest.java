package dev.redlockd.it.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The example for each language in README.md and docs/clients.md is the part of that language's
 * example program between its README markers, verbatim: ClientExampleTest runs those programs,
 * so both pages show code that works.
 */
class ReadmeClientsTest {
  private final Path root = Runtimes.repositoryRoot();

  @ParameterizedTest
  @EnumSource(value = Language.class, names = {"PYTHON", "NODE", "GO"})
  void readmeQuotesTheExampleThatTheSuiteRuns(Language language) throws IOException {
    Path file = switch (language) {
      case PYTHON -> root.resolve("clients/python/examples/lock_example.py");
      case NODE -> root.resolve("clients/node/examples/lock-example.mjs");
      case GO -> root.resolve("clients/go/cmd/redlockd-example/main.go");
      case JAVA -> throw new IllegalArgumentException("ReadmeClientExampleTest checks Java's");
      case PYTHON_AIO -> throw new IllegalArgumentException("PythonDocsExamplesTest checks python-aio's");
    };
    String comment = language == Language.PYTHON ? "#" : "//";
    Matcher m = Pattern.compile(Pattern.quote(comment) + " --- README example begins ---\\n(.*?)\\n\\s*"
        + Pattern.quote(comment) + " --- README example ends ---", Pattern.DOTALL).matcher(Files.readString(file));
    assertThat(m.find()).as("README markers in " + file).isTrue();
    String example = String.join("\n", dedent(m.group(1).lines().toList()));
    String fence = switch (language) {
      case PYTHON -> "python";
      case NODE -> "js";
      default -> "go";
    };
    for (String page : List.of("README.md", "docs/clients.md")) {
      assertThat(Files.readString(root.resolve(page)))
          .as(page + "'s " + language.id + " example, quoted from " + root.relativize(file))
          .contains("```" + fence + "\n" + example + "\n```");
    }
  }

  /** Removes the indentation every non-blank line shares (spaces or tabs). */
  private static List<String> dedent(List<String> lines) {
    int indent = lines.stream().filter(l -> !l.isBlank())
        .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList();
  }
}
