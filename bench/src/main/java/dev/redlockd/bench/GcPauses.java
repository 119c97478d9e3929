package dev.redlockd.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The server's young-collection pauses, read from its {@code -Xlog:gc} file: a stop-the-world
 * pause longer than the node timeout makes the renewals in flight miss it, so their count,
 * p99 and max belong next to the JEOPARDY figures.
 */
record GcPauses(int count, double p99Ms, double maxMs) {
  /** {@code [12.345s][info][gc] GC(7) Pause Young (Normal) (G1 Evacuation Pause) 31M->28M(50M) 38.603ms} */
  private static final Pattern YOUNG = Pattern.compile("Pause Young .*?([\\d.]+)ms\\s*$");

  /** The server JVM's flag that writes the log this reads. */
  static String flag(Path log) {
    return "-Xlog:gc:file=" + log;
  }

  static GcPauses read(Path log) throws IOException {
    return Files.isReadable(log) ? parse(Files.readAllLines(log)) : new GcPauses(0, Double.NaN, Double.NaN);
  }

  /** Young pauses only (G1's Normal, Concurrent Start, Prepare Mixed and Mixed); full collections are counted apart. */
  static GcPauses parse(List<String> lines) {
    List<Double> ms = new ArrayList<>();
    for (String line : lines) {
      Matcher m = YOUNG.matcher(line);
      if (m.find()) {
        ms.add(Double.parseDouble(m.group(1)));
      }
    }
    if (ms.isEmpty()) {
      return new GcPauses(0, Double.NaN, Double.NaN);
    }
    ms.sort(null);
    int p99 = Math.min(ms.size() - 1, (int) Math.ceil(ms.size() * 0.99) - 1);
    return new GcPauses(ms.size(), ms.get(p99), ms.get(ms.size() - 1));
  }

  /** As the tables print it: {@code p99 38.6 ms, max 128.9 ms (36 pauses)}. */
  String describe() {
    return count == 0 ? "none logged"
        : String.format(Locale.ROOT, "p99 %.1f ms, max %.1f ms (%d pauses)", p99Ms, maxMs, count);
  }
}
