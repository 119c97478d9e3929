package dev.redlockd.server;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Parses the flags' durations: {@code 250ms}, {@code 10s}, {@code 5m}, {@code 1h}. */
final class DurationFlag implements CommandLine.ITypeConverter<Duration> {
  private static final Pattern FORMAT = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

  @Override
  public Duration convert(String text) {
    return parse(text);
  }

  static Duration parse(String text) {
    Matcher m = FORMAT.matcher(text.strip());
    if (!m.matches()) {
      throw new CommandLine.TypeConversionException(
          "'" + text + "' is not a duration: write it like 250ms, 10s, 5m or 1h");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofHours(n);
    };
  }

  static String format(Duration d) {
    long ms = d.toMillis();
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}
