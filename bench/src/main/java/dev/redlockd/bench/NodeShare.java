package dev.redlockd.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One point of {@link NodeShareBench}: N nodes, n per resource, thrifty rounds or not, and what
 * each node's Redis did for the measured cycles. A node's share of the cycles is its script
 * calls over two per cycle (a cycle that asks a node calls it twice: acquire and release; the
 * monitor's probe adds 2 a second), its µs per cycle are its CPU over the cycles it took part in.
 * With a core of its own, a node runs out at {@code 1e6 / (µs per cycle × share)} cycles/s, and
 * the busiest node does first: that is the projected ceiling (the server's cores aside).
 */
record NodeShare(int nodes, int perResource, boolean thrifty, int target, OpenRate.Outcome warmUp,
    OpenRate.Outcome measured, NodeShareBench.NodeReading work, double serverCores) {

  double rate() {
    return measured.rate();
  }

  /** The point measured the load it was meant to: the rate reached, and no cycle failed. */
  boolean valid() {
    return rate() >= NodeShareBench.VALID_SHARE_OF_RATE * target && measured.failures() == 0;
  }

  /** The share of the cycles each node should take part in: q/N thrifty, n/N asking every node of the set. */
  double expectedShare() {
    return (thrifty ? perResource / 2 + 1 : perResource) / (double) nodes;
  }

  /** Node i's CPU, cores. */
  double cores(int i) {
    return work.cpuSeconds()[i] / measured.seconds();
  }

  double share(int i) {
    return measured.done() == 0 ? Double.NaN : work.scripts()[i] / (2.0 * measured.done());
  }

  /** CPU µs of node i per cycle it took part in. */
  double micros(int i) {
    return work.scripts()[i] == 0 ? Double.NaN : 1e6 * work.cpuSeconds()[i] / (work.scripts()[i] / 2.0);
  }

  /** Cycles/s at which node i would use a whole core: 1e6 / (µs per cycle × share). */
  double ceiling(int i) {
    return 1e6 / (micros(i) * share(i));
  }

  private double[] each(java.util.function.IntToDoubleFunction f) {
    double[] v = new double[nodes];
    for (int i = 0; i < nodes; i++) {
      v[i] = f.applyAsDouble(i);
    }
    return v;
  }

  private static String minMeanMax(double[] v, double scale, String format) {
    double min = Arrays.stream(v).min().orElse(Double.NaN) * scale;
    double mean = Arrays.stream(v).average().orElse(Double.NaN) * scale;
    double max = Arrays.stream(v).max().orElse(Double.NaN) * scale;
    return String.format(Locale.ROOT, format + " / " + format + " / " + format, min, mean, max);
  }

  /** One line as soon as the point ends, each node's figures in full. */
  String line() {
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
        "N %d, n %d, thrifty %s: %.0f cycles/s of %d (ramp: %.0f/s done, failed %s; measured: failed %s), "
            + "server %.2f cores%s%n", nodes, perResource, thrifty ? "on" : "off", rate(), target, warmUp.rate(),
        warmUp.failuresText(), measured.failuresText(), serverCores, valid() ? "" : " INVALID"));
    for (int i = 0; i < nodes; i++) {
      s.append(String.format(Locale.ROOT, "     node %d: %.1f %% CPU, share %.3f, %.1f us per cycle%n", i + 1,
          100 * cores(i), share(i), micros(i)));
    }
    return s.toString().stripTrailing();
  }

  static final String HEADER = """
      | N | n | thrifty | cycles/s (target) | failed | valid | Redis CPU per node, % of a core (min / mean / max) | µs per node per cycle it takes part in (min / mean / max) | share of cycles, expected | share measured (min / mean / max) | ceiling with a core per node, cycles/s | server cores (µs per cycle) |
      | ---: | ---: | --- | ---: | ---: | --- | --- | --- | ---: | --- | ---: | ---: |
      """;

  String tableRow() {
    double ceiling = Arrays.stream(each(this::ceiling)).min().orElse(Double.NaN);
    return String.format(Locale.ROOT, "| %d | %d | %s | %,.0f (%,d) | %d | %s | %s | %s | %.3f | %s | %,.0f | %.2f (%.0f) |",
        nodes, perResource, thrifty ? "on" : "off", rate(), target, measured.failures(), valid() ? "yes" : "**no**",
        minMeanMax(each(this::cores), 100, "%.1f"), minMeanMax(each(this::micros), 1, "%.1f"), expectedShare(),
        minMeanMax(each(this::share), 1, "%.3f"), ceiling, serverCores, 1e6 * serverCores / rate());
  }

  static String markdown(List<NodeShare> rows) {
    StringBuilder md = new StringBuilder(HEADER);
    rows.forEach(r -> md.append(r.tableRow()).append('\n'));
    return md.toString();
  }
}
