package dev.redlockd.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** What the chart writers share: reading the Markdown tables the benches wrote, and placing the charts' block in a page. */
final class PageCharts {
  private PageCharts() {}

  /** The rows (cells trimmed, header and separator left out) of the first table at or after {@code from}. */
  static List<List<String>> tableAfter(String page, int from) {
    List<List<String>> rows = new ArrayList<>();
    if (from < 0) {
      return rows;
    }
    String[] lines = page.substring(from).split("\n", -1);
    boolean inTable = false;
    int seen = 0;
    for (String line : lines) {
      if (line.startsWith("|")) {
        inTable = true;
        seen++;
        if (seen > 2) {
          String inner = line.substring(1, line.lastIndexOf('|'));
          rows.add(Arrays.stream(inner.split("\\|", -1)).map(String::trim).toList());
        }
      } else if (inTable) {
        break;
      }
    }
    return rows;
  }

  /** The value cell of a two-column figure/value table whose first cell starts with {@code figure}; null if absent. */
  static String figure(List<List<String>> rows, String figure) {
    return rows.stream().filter(r -> r.size() >= 2 && r.get(0).startsWith(figure)).map(r -> r.get(1)).findFirst()
        .orElse(null);
  }

  /** A number as the tables print it ("3,641", "1.30 ms", "133"); NaN when it is not one. */
  static double number(String cell) {
    if (cell == null) {
      return Double.NaN;
    }
    String n = cell.replace(",", "").trim().split("\\s+")[0];
    try {
      return Double.parseDouble(n);
    } catch (NumberFormatException e) {
      return Double.NaN;
    }
  }

  /** The page with {@code block} between the two markers, replacing what was there, or inserted at {@code at}. */
  static String place(String page, String begin, String end, String block, int at) {
    String marked = begin + "\n" + block + end + "\n";
    int from = page.indexOf(begin);
    int to = page.indexOf(end);
    if (from >= 0 && to > from) {
      int after = page.indexOf('\n', to);
      return page.substring(0, from) + marked + (after < 0 ? "" : page.substring(after + 1));
    }
    int where = at < 0 ? page.length() : at;
    String before = page.substring(0, where);
    String sep = before.isEmpty() || before.endsWith("\n\n") ? "" : before.endsWith("\n") ? "\n" : "\n\n";
    String rest = page.substring(where);
    return before + sep + marked + (rest.isEmpty() || rest.startsWith("\n") ? "" : "\n") + rest;
  }
}
