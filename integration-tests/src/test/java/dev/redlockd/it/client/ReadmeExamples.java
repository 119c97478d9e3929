package dev.redlockd.it.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Checks that docs/clients.md quotes an example class's code between its README markers, verbatim. */
public final class ReadmeExamples {
  private static final Path MODULE = Path.of(System.getProperty("user.dir"));

  private ReadmeExamples() {}

  /** {@code exampleClass}'s source, between {@code // README:<marker>:begin} and {@code :end}, is in the page. */
  public static void assertQuoted(Class<?> exampleClass, String marker) throws IOException {
    String exampleFile = exampleClass.getSimpleName() + ".java";
    String source = Files.readString(MODULE.resolve("src/test/java/" + exampleClass.getName().replace('.', '/') + ".java"));
    Matcher m = Pattern.compile("// README:" + Pattern.quote(marker) + ":begin\\n(.*?)\\n\\s*// README:"
        + Pattern.quote(marker) + ":end", Pattern.DOTALL).matcher(source);
    assertThat(m.find()).as("README markers " + marker + " in " + exampleFile).isTrue();
    List<String> lines = m.group(1).lines().toList();
    int indent = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
        .min().orElse(0);
    String example = String.join("\n", lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList());
    assertThat(Files.readString(MODULE.resolve("../docs/clients.md"))).as("docs/clients.md's Java " + marker)
        .contains("```java\n" + example + "\n```");
  }
}
