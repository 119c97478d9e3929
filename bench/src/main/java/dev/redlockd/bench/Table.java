package dev.redlockd.bench;

import java.util.ArrayList;
import java.util.List;

/** A Markdown table padded to column width, so the same text reads well in a terminal. */
final class Table {
  private final List<String[]> rows = new ArrayList<>();
  private final boolean[] rightAligned;

  Table(String... header) {
    rows.add(header);
    rightAligned = new boolean[header.length];
  }

  Table right(int... columns) {
    for (int c : columns) {
      rightAligned[c] = true;
    }
    return this;
  }

  Table row(String... cells) {
    rows.add(cells);
    return this;
  }

  String render() {
    int[] width = new int[rightAligned.length];
    for (String[] r : rows) {
      for (int c = 0; c < r.length; c++) {
        width[c] = Math.max(width[c], Math.max(3, r[c].length()));
      }
    }
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < rows.size(); i++) {
      line(out, rows.get(i), width);
      if (i == 0) {
        String[] rule = new String[width.length];
        for (int c = 0; c < width.length; c++) {
          rule[c] = rightAligned[c] ? "-".repeat(width[c] - 1) + ":" : "-".repeat(width[c]);
        }
        line(out, rule, width);
      }
    }
    return out.toString();
  }

  private void line(StringBuilder out, String[] cells, int[] width) {
    out.append('|');
    for (int c = 0; c < width.length; c++) {
      String cell = c < cells.length ? cells[c] : "";
      String pad = " ".repeat(width[c] - cell.length());
      out.append(' ').append(rightAligned[c] ? pad + cell : cell + pad).append(" |");
    }
    out.append('\n');
  }
}
