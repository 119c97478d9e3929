package dev.redlockd.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The charts of docs/keepalive.md, drawn from the figures KeepAliveLoad wrote in the page's run
 * sections (a run and {@code --charts-only} draw the same thing): renewals per second against
 * open streams, measured and expected, and the latency of opening a stream at each run.
 */
final class KeepAliveCharts {
  static final String BEGIN = "<!-- keepalive-charts:begin -->";
  static final String END = "<!-- keepalive-charts:end -->";
  private static final Pattern RUN = Pattern.compile("<!-- keepalive-run: (\\d+) streams -->");
  private static final Pattern PERCENTILES = Pattern.compile("p50 (\\d+) ms, p90 (\\d+) ms, p99 (\\d+) ms, max (\\d+) ms");
  private static final Pattern EXPECTED = Pattern.compile("expected ([\\d,]+)");

  private KeepAliveCharts() {}

  record Run(int streams, double ttlMs, double renewalsPerSecond, double expected, double[] acquire, double[] first) {}

  static List<Run> runs(String page) {
    TreeMap<Integer, Run> runs = new TreeMap<>();
    Matcher m = RUN.matcher(page);
    while (m.find()) {
      List<List<String>> rows = PageCharts.tableAfter(page, m.end());
      int streams = Integer.parseInt(m.group(1));
      String renewals = PageCharts.figure(rows, "renewals per second");
      Matcher expected = EXPECTED.matcher(renewals == null ? "" : renewals);
      runs.put(streams, new Run(streams, PageCharts.number(PageCharts.figure(rows, "ttl")),
          PageCharts.number(renewals), expected.find() ? PageCharts.number(expected.group(1)) : Double.NaN,
          percentiles(PageCharts.figure(rows, "Acquire round trip while opening")),
          percentiles(PageCharts.figure(rows, "from the Acquire answer to the stream's first answer"))));
    }
    return List.copyOf(runs.values());
  }

  private static double[] percentiles(String cell) {
    Matcher m = PERCENTILES.matcher(cell == null ? "" : cell);
    if (!m.find()) {
      return null;
    }
    return new double[] {Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)),
        Double.parseDouble(m.group(3)), Double.parseDouble(m.group(4))};
  }

  static LineChart renewalsChart(List<Run> runs) {
    return new LineChart("KeepAlive renewals per second against open streams", "open KeepAlive streams",
        "renewals per second").logX()
        .series("measured (HELD answers per second)",
            runs.stream().map(r -> new LineChart.Point(r.streams(), r.renewalsPerSecond())).toList())
        .series("expected (streams / (ttl / 3))",
            runs.stream().map(r -> new LineChart.Point(r.streams(), r.expected())).toList());
  }

  static LineChart openLatencyChart(List<Run> runs) {
    LineChart chart = new LineChart("Opening a KeepAlive stream while the others renew", "percentile of streams opened",
        "milliseconds").logY().xTicks(List.of(new LineChart.Tick(1, "p50"), new LineChart.Tick(2, "p90"),
            new LineChart.Tick(3, "p99"), new LineChart.Tick(4, "max")));
    for (Run r : runs) {
      String label = String.format(java.util.Locale.ROOT, "%,d streams", r.streams());
      if (r.acquire() != null) {
        chart.series(label + ": Acquire round trip", points(r.acquire()));
      }
      if (r.first() != null) {
        chart.series(label + ": to the stream's first answer", points(r.first()));
      }
    }
    return chart;
  }

  private static List<LineChart.Point> points(double[] values) {
    List<LineChart.Point> points = new ArrayList<>();
    for (int i = 0; i < values.length; i++) {
      points.add(new LineChart.Point(i + 1, values[i]));
    }
    return points;
  }

  /** One rate of the open-rate sweep, as its table row reads. */
  record OpenRate(double rate, double opened, double refusedStreams, double lost, double neverOpened) {}

  /** The rows of the open-rate section's table, by rate; empty without one. */
  static List<OpenRate> openRates(String page) {
    int at = page.indexOf(KeepAliveDoc.SWEEP_BEGIN);
    if (at < 0) {
      return List.of();
    }
    List<OpenRate> rows = new ArrayList<>();
    for (List<String> r : PageCharts.tableAfter(page, at)) {
      if (r.size() >= 6) {
        rows.add(new OpenRate(PageCharts.number(r.get(0)), PageCharts.number(r.get(2)), PageCharts.number(r.get(3)),
            PageCharts.number(r.get(4)), PageCharts.number(r.get(5))));
      }
    }
    rows.sort(java.util.Comparator.comparingDouble(OpenRate::rate));
    return rows;
  }

  static LineChart openRateChart(List<OpenRate> rows) {
    return new LineChart("What becomes of streams opened at each rate", "streams opened per second", "streams")
        .series("opened and kept", rows.stream().map(r -> new LineChart.Point(r.rate(), r.opened())).toList())
        .series("refused early (UNAVAILABLE with a pushback), retried",
            rows.stream().map(r -> new LineChart.Point(r.rate(), r.refusedStreams())).toList())
        .series("lost (ended before the half-close)",
            rows.stream().map(r -> new LineChart.Point(r.rate(), r.lost())).toList())
        .series("never opened", rows.stream().map(r -> new LineChart.Point(r.rate(), r.neverOpened())).toList());
  }

  /** Draws the charts from the page's run and open-rate sections, writes them beside it and links them from the page. */
  static List<Path> write(Path doc) throws IOException {
    String page = Files.readString(doc);
    List<Run> runs = runs(page);
    List<OpenRate> openRates = openRates(page);
    if (runs.isEmpty() && openRates.isEmpty()) {
      return List.of();
    }
    String stem = doc.getFileName().toString().replaceFirst("\\.md$", "");
    List<Path> written = new ArrayList<>();
    StringBuilder block = new StringBuilder();
    if (!runs.isEmpty()) {
      Path renewals = doc.resolveSibling(stem + "-renewals.svg");
      Path open = doc.resolveSibling(stem + "-open-latency.svg");
      renewalsChart(runs).write(renewals);
      openLatencyChart(runs).write(open);
      written.addAll(List.of(renewals, open));
      block.append("![KeepAlive renewals per second against open streams, measured and expected](")
          .append(renewals.getFileName()).append(")\n\n")
          .append("![Latency of opening a KeepAlive stream, per run](").append(open.getFileName()).append(")\n\n");
    }
    if (!openRates.isEmpty()) {
      Path curve = doc.resolveSibling(stem + "-open-rate.svg");
      openRateChart(openRates).write(curve);
      written.add(curve);
      block.append("![What becomes of streams opened at each rate: opened, refused early, lost](")
          .append(curve.getFileName()).append(")\n\n");
    }
    block.append("The charts are drawn from the run sections below by the command that measured them (or again, from "
        + "the page, by `KeepAliveLoad --charts-only " + doc + "`); never by hand.\n");
    Matcher first = RUN.matcher(page);
    int firstSection = first.find() ? first.start() : -1;
    int sweep = page.indexOf(KeepAliveDoc.SWEEP_BEGIN);
    if (sweep >= 0 && (firstSection < 0 || sweep < firstSection)) {
      firstSection = sweep;
    }
    Files.writeString(doc, PageCharts.place(page, BEGIN, END, block.toString(), firstSection));
    return written;
  }
}
