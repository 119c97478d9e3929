package dev.redlockd.server;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * REDLOCKD_LOG_LEVEL, which logback.xml reads. Checked before anything logs: logback turns a
 * level it does not know ({@code WARNING}, a typo) into DEBUG, without a word.
 */
final class LogLevel {
  static final String VARIABLE = "REDLOCKD_LOG_LEVEL";
  static final String VALID = "TRACE, DEBUG, INFO, WARN, ERROR or OFF";
  private static final List<String> LEVELS = List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");

  private LogLevel() {}

  /** Throws IllegalArgumentException with a one-line reason for a level logback would not take as written. */
  static void check(Map<String, String> env) {
    String level = env.get(VARIABLE);
    if (level == null) {
      return;
    }
    if (!LEVELS.contains(level.strip().toUpperCase(Locale.ROOT))) {
      throw new IllegalArgumentException(VARIABLE + "=" + level + ": not a log level; use one of " + VALID);
    }
  }
}
