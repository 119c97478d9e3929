package dev.redlockd.it.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every fenced code block in README.md and docs/*.md carries a marker, an HTML comment alone on
 * the line just above its opening fence (the convention is in docs/README.md, "Code blocks"):
 * {@code <!-- tested by SomeTest -->} (each class named exists in the repository and names the
 * page in its source), {@code <!-- output -->} (a transcript; nothing runs it), or
 * {@code <!-- untested: why -->} (a command no test runs, and why). A block without one fails,
 * so a new example has to say whether anything keeps it true.
 */
class DocCodeBlocksTest {
  private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*(.*?)\\s*-->\\s*$");
  private static final Pattern TESTED_BY = Pattern.compile("tested by ([A-Za-z_][\\w]*(?:\\s*,\\s*[A-Za-z_][\\w]*)*)");
  private static final Pattern UNTESTED = Pattern.compile("untested: \\S.*");

  @Test
  void everyCodeBlockSaysWhatKeepsItTrue() throws IOException {
    Markdown docs = Markdown.ofRepository();
    List<String> problems = new ArrayList<>();
    int blocks = 0;
    int tested = 0;
    for (Path page : docs.pages()) {
      List<String> lines = Markdown.lines(page);
      for (Markdown.Block block : Markdown.blocks(lines)) {
        blocks++;
        String where = docs.relative(page) + ":" + block.line() + ": ";
        String marker = markerAbove(lines, block.line() - 1);
        if (marker == null) {
          problems.add(where + "no marker above " + block.opening().strip()
              + " (<!-- tested by SomeTest -->, <!-- output --> or <!-- untested: why -->)");
          continue;
        }
        Matcher testedBy = TESTED_BY.matcher(marker);
        if (testedBy.matches()) {
          tested++;
          for (String name : testedBy.group(1).split("\\s*,\\s*")) {
            Optional<Path> source = testSource(docs.root, name);
            if (source.isEmpty()) {
              problems.add(where + "tested by " + name + ", but there is no test class " + name);
            } else if (!Files.readString(source.get()).contains(pathAsWrittenInCode(docs.relative(page)))) {
              problems.add(where + "tested by " + name + ", but " + docs.relative(source.get())
                  + " does not name " + docs.relative(page));
            }
          }
        } else if (!marker.equals("output") && !UNTESTED.matcher(marker).matches()) {
          problems.add(where + "unknown marker <!-- " + marker + " -->");
        }
      }
    }
    assertThat(blocks).as("code blocks found").isGreaterThan(30);
    assertThat(tested).as("blocks a test checks").isGreaterThanOrEqualTo(10);
    assertThat(problems).as("code blocks without a valid marker").isEmpty();
  }

  @Test
  void anUnmarkedBlockOrAnUnknownTestIsCaught() {
    List<String> page = List.of(
        "<!-- output -->", "```text", "ok", "```", "",
        "```sh", "unmarked", "```",
        "", "  <!-- untested: needs Docker -->", "  ```sh", "  docker build .", "  ```");
    List<Markdown.Block> blocks = Markdown.blocks(page);
    assertThat(blocks).extracting(Markdown.Block::line).containsExactly(2, 6, 11);
    assertThat(markerAbove(page, 1)).isEqualTo("output");
    assertThat(markerAbove(page, 5)).isNull();
    assertThat(markerAbove(page, 10)).isEqualTo("untested: needs Docker");
    assertThat(testSource(Markdown.ofRepository().root, "NoSuchDocTest")).isEmpty();
    assertThat(testSource(Markdown.ofRepository().root, "DocCodeBlocksTest")).isPresent();
  }

  /** The marker on the line just above the fence at 0-based index {@code fence}, or null. */
  private static String markerAbove(List<String> lines, int fence) {
    if (fence == 0) {
      return null;
    }
    Matcher m = MARKER.matcher(lines.get(fence - 1));
    return m.matches() ? m.group(1) : null;
  }

  /** How a test's source names a page: README.md as {@code README.md"}, others by their path. */
  private static String pathAsWrittenInCode(String page) {
    return page.equals("README.md") ? "README.md\"" : page;
  }

  /** The source of a test class of that simple name, in some module's src/test/java. */
  private static Optional<Path> testSource(Path root, String simpleName) {
    try (Stream<Path> modules = Files.list(root)) {
      for (Path tests : modules.map(m -> m.resolve("src/test/java")).filter(Files::isDirectory).sorted().toList()) {
        try (Stream<Path> files = Files.walk(tests)) {
          Optional<Path> found = files.filter(f -> f.getFileName().toString().equals(simpleName + ".java")).findFirst();
          if (found.isPresent()) {
            return found;
          }
        }
      }
      return Optional.empty();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
