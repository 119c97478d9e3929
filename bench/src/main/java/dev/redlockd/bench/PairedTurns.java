package dev.redlockd.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Two systems measured in turns at each level, A then B, then B then A, and so on
 * ({@code --pairs N}): on a shared machine whose speed drifts by tens of percent from one half
 * hour to the next, the ratio of two points taken a few seconds apart is steadier than the ratio
 * of two runs, and the median of N such ratios steadier still. Each turn's ratio is printed, so
 * the spread shows too.
 */
final class PairedTurns {
  /** One turn: the two systems' points at one level, taken one right after the other. */
  record Turn(int inFlight, ClosedLoop.Point a, ClosedLoop.Point b) {
    double throughputRatio() {
      return b.cyclesPerSecond() / a.cyclesPerSecond();
    }

    /** B's Redis CPU per cycle over A's. */
    double redisPerCycleRatio() {
      return (b.cpu().redis() / b.cyclesPerSecond()) / (a.cpu().redis() / a.cyclesPerSecond());
    }

    double p50Ratio() {
      return (double) b.latencies().percentile(50) / a.latencies().percentile(50);
    }
  }

  private final String a;
  private final String b;
  private final Map<Integer, List<Turn>> byLevel = new TreeMap<>();

  PairedTurns(String a, String b) {
    this.a = a;
    this.b = b;
  }

  void add(Turn turn) {
    byLevel.computeIfAbsent(turn.inFlight(), l -> new ArrayList<>()).add(turn);
  }

  String markdown() {
    StringBuilder out = new StringBuilder();
    out.append(String.format(Locale.ROOT, "| in flight | turns | %s cycles/s, median | %s cycles/s, median "
        + "| %s / %s cycles/s: median (each turn) | Redis CPU per cycle, %s / %s: median (each turn) "
        + "| p50, %s / %s: median (each turn) |%n", a, b, b, a, b, a, b, a));
    out.append("| ---: | ---: | ---: | ---: | --- | --- | --- |\n");
    byLevel.forEach((level, turns) -> out.append(String.format(Locale.ROOT, "| %d | %d | %,.0f | %,.0f | %s | %s | %s |%n",
        level, turns.size(),
        median(turns.stream().mapToDouble(t -> t.a().cyclesPerSecond()).toArray()),
        median(turns.stream().mapToDouble(t -> t.b().cyclesPerSecond()).toArray()),
        summary(turns.stream().mapToDouble(Turn::throughputRatio).toArray()),
        summary(turns.stream().mapToDouble(Turn::redisPerCycleRatio).toArray()),
        summary(turns.stream().mapToDouble(Turn::p50Ratio).toArray()))));
    return out.toString();
  }

  /** "1.23x (1.10, 1.31, 1.25)": the median, then every turn's in the order taken. */
  private static String summary(double[] ratios) {
    StringBuilder each = new StringBuilder();
    for (double r : ratios) {
      each.append(each.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", r));
    }
    return String.format(Locale.ROOT, "%.2fx (%s)", median(ratios), each);
  }

  static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
