package dev.redlockd.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * What every server a test starts (a process or in-process) is given unless the test sets it
 * itself: admission control off. Admission control refuses new calls while the server's Redis
 * rounds run late, which a loaded test machine causes by itself; a test of locks, streams or
 * clients must not fail for that, and a raw stub's load then cannot be refused. The tests of
 * admission control set {@code --admission-latency} themselves.
 */
public final class ServerFlags {
  private static final String ADMISSION = "--admission-latency";

  private ServerFlags() {}

  /** {@code flags} with admission control off unless they set it or run a subcommand (healthcheck). */
  public static List<String> forTest(List<String> flags) {
    if (flags.contains(ADMISSION) || flags.contains("healthcheck")
        || flags.stream().anyMatch(f -> f.startsWith(ADMISSION + "="))) {
      return flags;
    }
    List<String> all = new ArrayList<>(flags);
    all.addAll(List.of(ADMISSION, "0"));
    return List.copyOf(all);
  }

  public static String[] forTest(String... flags) {
    return forTest(List.of(flags)).toArray(String[]::new);
  }
}
