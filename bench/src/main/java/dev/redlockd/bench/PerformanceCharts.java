package dev.redlockd.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The charts of docs/performance.md, drawn from the tables LockCycleBench wrote into the page
 * (so a run and {@code --charts-only} draw the same thing): lock cycles per second against
 * cycles in flight for every system, and the hand-off latency. Written beside the page as
 * {@code <page>-cycles.svg} and {@code <page>-handoff.svg}, and linked from a marked block
 * after the bench's own block.
 */
final class PerformanceCharts {
  static final String BEGIN = "<!-- bench-charts:begin -->";
  static final String END = "<!-- bench-charts:end -->";
  private static final Pattern LEVEL = Pattern.compile("(?m)^### (\\d+) cycles? in flight$");
  private static final Pattern TWO_MS = Pattern.compile("([\\d.]+) ms / ([\\d.]+) ms");

  private PerformanceCharts() {}

  /** cycles/s by system, then by cycles in flight, in the page's row order. */
  static Map<String, Map<Integer, Double>> cycles(String page) {
    Map<String, Map<Integer, Double>> bySystem = new LinkedHashMap<>();
    Matcher level = LEVEL.matcher(bench(page));
    while (level.find()) {
      int inFlight = Integer.parseInt(level.group(1));
      for (List<String> row : PageCharts.tableAfter(bench(page), level.end())) {
        double cps = PageCharts.number(row.get(1));
        if (!Double.isNaN(cps)) {
          bySystem.computeIfAbsent(row.get(0), s -> new LinkedHashMap<>()).put(inFlight, cps);
        }
      }
    }
    return bySystem;
  }

  static LineChart cyclesChart(String page) {
    LineChart chart = new LineChart("Lock cycles per second (acquire + release), every system",
        "cycles in flight", "cycles per second").logX().logY();
    cycles(page).forEach((system, points) -> chart.series(system, points.entrySet().stream()
        .map(e -> new LineChart.Point(e.getKey(), e.getValue())).toList()));
    return chart;
  }

  static LineChart handOffChart(String page) {
    String text = bench(page);
    List<List<String>> rows = PageCharts.tableAfter(text, text.indexOf("### Lock hand-off"));
    LineChart chart = new LineChart("Lock hand-off: Release sent to the next waiter's grant",
        "percentile of hand-offs", "milliseconds").logY()
        .xTicks(List.of(new LineChart.Tick(1, "p50"), new LineChart.Tick(2, "p99"), new LineChart.Tick(3, "max")));
    String clients = PageCharts.figure(rows, "clients queued on one resource, one server");
    chart.series("one server, " + (clients == null ? "" : clients + " ") + "clients queued", List.of(
        new LineChart.Point(1, PageCharts.number(PageCharts.figure(rows, "hand-off (Release sent -> next grant arrives) p50"))),
        new LineChart.Point(2, PageCharts.number(PageCharts.figure(rows, "hand-off p99"))),
        new LineChart.Point(3, PageCharts.number(PageCharts.figure(rows, "hand-off max")))));
    across(chart, rows, "two servers, release notices on (default)", "two servers, to the other server's client");
    across(chart, rows, "two servers, `--notify-waiters false`",
        "two servers, to the other server's client, --notify-waiters false");
    return chart;
  }

  private static void across(LineChart chart, List<List<String>> rows, String figure, String name) {
    for (List<String> row : rows) {
      if (row.size() >= 2 && row.get(0).startsWith(figure) && row.get(0).contains("p50 / p99")) {
        Matcher m = TWO_MS.matcher(row.get(1));
        if (m.find()) {
          chart.series(name, List.of(new LineChart.Point(1, Double.parseDouble(m.group(1))),
              new LineChart.Point(2, Double.parseDouble(m.group(2)))));
        }
      }
    }
  }

  /** Draws the charts from the page's tables, writes them beside it and links them from the page. */
  static List<Path> write(Path doc) throws IOException {
    String page = Files.readString(doc);
    String stem = doc.getFileName().toString().replaceFirst("\\.md$", "");
    Path cycles = doc.resolveSibling(stem + "-cycles.svg");
    Path handOff = doc.resolveSibling(stem + "-handoff.svg");
    List<Path> written = new ArrayList<>();
    cyclesChart(page).write(cycles);
    written.add(cycles);
    String block = "![Lock cycles per second against cycles in flight, every system](" + cycles.getFileName() + ")\n\n";
    LineChart h = handOffChart(page);
    if (!h.series().isEmpty()) {
      h.write(handOff);
      written.add(handOff);
      block += "![Lock hand-off latency, p50 / p99 / max](" + handOff.getFileName() + ")\n\n";
    }
    block += "The charts are drawn from the tables above by the command that measured them (or again, from the "
        + "page, by `LockCycleBench --charts-only " + doc + "`); never by hand.\n";
    int end = page.indexOf(Report.END);
    Files.writeString(doc, PageCharts.place(page, BEGIN, END, block,
        end < 0 ? -1 : page.indexOf('\n', end) + 1));
    return written;
  }

  private static String bench(String page) {
    int begin = page.indexOf(Report.BEGIN);
    int end = page.indexOf(Report.END);
    return begin >= 0 && end > begin ? page.substring(begin, end) : page;
  }
}
