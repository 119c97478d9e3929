package dev.redlockd.it.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Dockerfile's build stage copies every module's pom before it runs Maven: Maven reads each
 * module the parent pom names even when it builds only the server, and fails on a missing one.
 * The Spring Boot starter's module was once added without its line, which broke the image build
 * while every test passed.
 */
class DockerfileModulesTest {
  private static final Pattern MODULE = Pattern.compile("^\\s*<module>([^<]+)</module>\\s*$");

  @Test
  void theImageBuildCopiesEveryModulesPom() {
    Markdown docs = Markdown.ofRepository();
    List<String> modules = Markdown.lines(docs.root.resolve("pom.xml")).stream()
        .map(MODULE::matcher).filter(Matcher::matches).map(m -> m.group(1)).toList();
    List<String> dockerfile = Markdown.lines(docs.root.resolve("Dockerfile"));
    assertThat(modules).as("the parent pom's modules").isNotEmpty();
    for (String module : modules) {
      assertThat(dockerfile).as("the Dockerfile's COPY of " + module + "/pom.xml")
          .anyMatch(l -> l.startsWith("COPY ") && l.contains(" " + module + "/pom.xml"));
    }
  }
}
