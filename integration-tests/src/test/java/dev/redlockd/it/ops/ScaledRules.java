package dev.redlockd.it.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A copy of an alert rule file on a faster clock: every duration (a rate window, an offset, a
 * `for`) divided by a factor, every alert renamed with the suffix {@code Scaled}. Loaded beside
 * the real rules, it shows in seconds what the real ones do in minutes: whether an alert fires
 * during a fault, and stops within its bound once the fault is over. Thresholds are left as they
 * are, so a rate over the shorter window is noisier, never quieter, than the real one.
 */
final class ScaledRules {
  static final String SUFFIX = "Scaled";
  /** A PromQL or `for` duration: in a range selector, after offset, or as a `for` value. */
  private static final Pattern DURATION = Pattern.compile("(\\[|offset |for: )(\\d+)(ms|s|m|h)\\b");
  private static final Pattern ANY_DURATION = Pattern.compile("\\b\\d+(ms|s|m|h)\\b");

  private ScaledRules() {}

  /** Writes the scaled copy of {@code rules} into {@code dir}; every duration in an expression or a `for` is scaled. */
  static Path write(Path rules, Path dir, int factor) throws IOException {
    StringBuilder scaled = new StringBuilder();
    int durations = 0;
    int expected = 0;
    for (String line : Files.readAllLines(rules)) {
      String stripped = line.strip();
      if (stripped.startsWith("#") || stripped.startsWith("summary:") || stripped.startsWith("description:")) {
        scaled.append(line).append('\n');
        continue;
      }
      Matcher any = ANY_DURATION.matcher(line);
      while (any.find()) {
        expected++;
      }
      Matcher m = DURATION.matcher(line);
      StringBuilder out = new StringBuilder();
      while (m.find()) {
        durations++;
        long millis = Long.parseLong(m.group(2)) * switch (m.group(3)) {
          case "ms" -> 1L;
          case "s" -> 1_000L;
          case "m" -> 60_000L;
          default -> 3_600_000L;
        };
        m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + millis / factor + "ms"));
      }
      m.appendTail(out);
      scaled.append(out.toString()
          .replaceFirst("^(\\s*- alert: )(\\w+)$", "$1$2" + SUFFIX)
          .replaceFirst("^(\\s*- name: )(.+)$", "$1$2-scaled")).append('\n');
    }
    assertThat(durations).as("durations scaled in " + rules).isEqualTo(expected).isPositive();
    return Files.writeString(dir.resolve("scaled-" + rules.getFileName()), scaled);
  }
}
