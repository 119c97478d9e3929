package dev.redlockd.it.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * README.md's test command is the one CI runs: the block under "## Test it" is exactly one
 * line of .ci/run (which times it, and checks what it left behind). If one changes, the other
 * has to.
 */
class ReadmeTestCommandTest {

  @Test
  void readmesTestCommandIsWhatCiRuns() {
    Markdown docs = Markdown.ofRepository();
    List<String> readme = Markdown.lines(docs.root.resolve("README.md"));
    int heading = readme.indexOf("## Test it");
    assertThat(heading).as("a \"## Test it\" heading in README.md").isNotNegative();
    Markdown.Block block = Markdown.blocks(readme).stream().filter(b -> b.line() > heading).findFirst().orElseThrow();
    assertThat(block.info()).isEqualTo("sh");
    String command = readme.get(block.line()); // the line after the opening fence (1-based line = next index)
    assertThat(readme.get(block.line() + 1)).as("one line in the block").isEqualTo("```");

    List<String> ci = Markdown.lines(docs.root.resolve(".ci/run")).stream()
        .filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
    assertThat(command).isEqualTo("mvn -B verify");
    assertThat(ci).as(".ci/run's commands").containsOnlyOnce("time " + command);
  }
}
