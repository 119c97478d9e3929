package dev.redlockd.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A line chart written as a standalone SVG file: axes with ticks and labels, one line with
 * markers per series, and a legend. Either axis may be logarithmic; the x axis may instead
 * carry named positions (p50, p99, max). Drawn from measured data only, by the commands that
 * measure it.
 */
final class LineChart {
  record Point(double x, double y) {}

  record Series(String name, List<Point> points) {}

  record Tick(double value, String label) {}

  private static final String[] COLORS = {
      "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"};
  private static final int PLOT_WIDTH = 480;
  private static final int HEIGHT = 440;
  private static final int LEFT = 80;
  /** Roughly one character of the 12 px legend, so that the widest name fits. */
  private static final int CHAR_WIDTH = 7;
  private static final int TOP = 40;
  private static final int BOTTOM = 60;

  private final String title;
  private final String xLabel;
  private final String yLabel;
  private boolean xLog;
  private boolean yLog;
  private List<Tick> xTicks;
  private final List<Series> series = new ArrayList<>();

  LineChart(String title, String xLabel, String yLabel) {
    this.title = title;
    this.xLabel = xLabel;
    this.yLabel = yLabel;
  }

  LineChart logX() {
    xLog = true;
    return this;
  }

  LineChart logY() {
    yLog = true;
    return this;
  }

  /** Named x positions instead of numbers (and only these ticks). */
  LineChart xTicks(List<Tick> ticks) {
    xTicks = List.copyOf(ticks);
    return this;
  }

  LineChart series(String name, List<Point> points) {
    List<Point> usable = points.stream()
        .filter(p -> Double.isFinite(p.x()) && Double.isFinite(p.y()) && (!xLog || p.x() > 0) && (!yLog || p.y() > 0))
        .toList();
    if (!usable.isEmpty()) {
      series.add(new Series(name, usable));
    }
    return this;
  }

  List<Series> series() {
    return series;
  }

  void write(Path file) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, svg());
  }

  String svg() {
    if (series.isEmpty()) {
      throw new IllegalStateException(title + ": no data to chart");
    }
    Axis x = xTicks != null ? Axis.named(xTicks) : Axis.of(series.stream()
        .flatMap(s -> s.points().stream()).mapToDouble(Point::x).toArray(), xLog, false);
    Axis y = Axis.of(series.stream().flatMap(s -> s.points().stream()).mapToDouble(Point::y).toArray(), yLog, true);
    int plotW = PLOT_WIDTH;
    int longest = series.stream().mapToInt(s -> s.name().length()).max().orElse(0);
    int width = LEFT + plotW + 50 + Math.max(100, longest * CHAR_WIDTH);
    int plotH = HEIGHT - TOP - BOTTOM;
    StringBuilder out = new StringBuilder();
    out.append(String.format(Locale.ROOT, """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" \
        font-family="sans-serif" font-size="12">
        <rect width="100%%" height="100%%" fill="white"/>
        <text x="%d" y="22" font-size="15" font-weight="bold">%s</text>
        """, width, HEIGHT, width, HEIGHT, LEFT, xml(title)));
    // Grid and ticks.
    for (Tick t : y.ticks()) {
      double py = TOP + plotH - y.fraction(t.value()) * plotH;
      out.append(String.format(Locale.ROOT,
          "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>%n", LEFT, py,
          LEFT + plotW, py));
      out.append(String.format(Locale.ROOT, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
          LEFT - 6, py + 4, xml(t.label())));
    }
    for (Tick t : x.ticks()) {
      double px = LEFT + x.fraction(t.value()) * plotW;
      out.append(String.format(Locale.ROOT,
          "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e5e5e5\"/>%n", px, TOP, px,
          TOP + plotH));
      out.append(String.format(Locale.ROOT,
          "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", px, TOP + plotH + 18,
          xml(t.label())));
    }
    // Axes and their labels.
    out.append(String.format(Locale.ROOT,
        "<path class=\"axes\" d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"black\"/>%n", LEFT, TOP, TOP + plotH,
        LEFT + plotW));
    out.append(String.format(Locale.ROOT,
        "<text class=\"axis-label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", LEFT + plotW / 2,
        HEIGHT - 16, xml(xLabel + (xLog && xTicks == null ? " (log scale)" : ""))));
    out.append(String.format(Locale.ROOT,
        "<text class=\"axis-label\" x=\"18\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">%s</text>%n",
        TOP + plotH / 2, TOP + plotH / 2, xml(yLabel + (yLog ? " (log scale)" : ""))));
    // Series and legend.
    for (int i = 0; i < series.size(); i++) {
      Series s = series.get(i);
      String color = COLORS[i % COLORS.length];
      StringBuilder points = new StringBuilder();
      StringBuilder markers = new StringBuilder();
      for (Point p : s.points()) {
        double px = LEFT + x.fraction(p.x()) * plotW;
        double py = TOP + plotH - y.fraction(p.y()) * plotH;
        points.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
        markers.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>", px, py,
            color));
      }
      out.append(String.format(Locale.ROOT,
          "<g class=\"series\" data-name=\"%s\"><polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%s</g>%n",
          xml(s.name()), points.toString().trim(), color, markers));
      int ly = TOP + 10 + i * 20;
      out.append(String.format(Locale.ROOT,
          "<g class=\"legend\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>"
              + "<text x=\"%d\" y=\"%d\">%s</text></g>%n",
          LEFT + plotW + 14, ly, LEFT + plotW + 34, ly, color, LEFT + plotW + 40, ly + 4, xml(s.name())));
    }
    out.append("</svg>\n");
    return out.toString();
  }

  /** Maps values to [0, 1] along one axis, and names its ticks. */
  private record Axis(double min, double max, boolean log, List<Tick> ticks) {
    static Axis named(List<Tick> ticks) {
      double min = ticks.stream().mapToDouble(Tick::value).min().orElse(0);
      double max = ticks.stream().mapToDouble(Tick::value).max().orElse(1);
      double pad = Math.max((max - min) * 0.05, 0.5);
      return new Axis(min - pad, max + pad, false, ticks);
    }

    static Axis of(double[] values, boolean log, boolean fromZero) {
      double lo = java.util.Arrays.stream(values).min().orElse(0);
      double hi = java.util.Arrays.stream(values).max().orElse(1);
      if (log) {
        double min = Math.pow(10, Math.floor(Math.log10(lo)));
        double max = Math.pow(10, Math.ceil(Math.log10(hi)));
        if (max <= min) {
          max = min * 10;
        }
        List<Tick> ticks = new ArrayList<>();
        for (double d = min; d <= max * 1.0001; d *= 10) {
          for (int m : new int[] {1, 2, 5}) {
            double v = d * m;
            if (v >= min && v <= max * 1.0001 && (m == 1 || max / min <= 1000)) {
              ticks.add(new Tick(v, number(v)));
            }
          }
        }
        return new Axis(min, max, true, ticks);
      }
      double min = fromZero ? Math.min(0, lo) : lo;
      double max = hi <= min ? min + 1 : hi;
      double step = niceStep((max - min) / 5);
      min = Math.floor(min / step) * step;
      max = Math.ceil(max / step) * step;
      List<Tick> ticks = new ArrayList<>();
      for (double v = min; v <= max + step / 1000; v += step) {
        ticks.add(new Tick(v, number(v)));
      }
      return new Axis(min, max, false, ticks);
    }

    double fraction(double v) {
      return log ? (Math.log10(v) - Math.log10(min)) / (Math.log10(max) - Math.log10(min)) : (v - min) / (max - min);
    }

    private static double niceStep(double raw) {
      double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
      for (double m : new double[] {1, 2, 2.5, 5, 10}) {
        if (raw <= m * magnitude) {
          return m * magnitude;
        }
      }
      return 10 * magnitude;
    }
  }

  static String number(double v) {
    if (v >= 1_000_000) {
      return trim(v / 1_000_000) + "M";
    }
    if (v >= 10_000) {
      return trim(v / 1_000) + "k";
    }
    return trim(v);
  }

  private static String trim(double v) {
    if (v == Math.rint(v)) {
      return String.format(Locale.ROOT, "%,d", (long) v);
    }
    return String.format(Locale.ROOT, "%.3f", v).replaceAll("0+$", "").replaceAll("\\.$", "");
  }

  private static String xml(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
