package dev.redlockd.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * KeepAlive renewals at 10,000 streams come from {@link KeepAliveLoad}, not from a second
 * implementation here: either a short run of it as a child process, or its latest published
 * figures, read from docs/keepalive.md.
 */
record KeepAliveFigures(String source, String streams, String renewalsPerSecond, String lost, String verdict) {
  static final String COMMAND = "java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.KeepAliveLoad "
      + "--streams 10000 --seconds 60 --write docs/keepalive.md";
  private static final Pattern DATE = Pattern.compile("(?i)date: (\\d{4}-\\d{2}-\\d{2})");

  /** The figures docs/keepalive.md holds now; null when the file is missing or has no table. */
  static KeepAliveFigures fromDoc(Path doc) throws IOException {
    if (!Files.isReadable(doc)) {
      return null;
    }
    List<String> lines = Files.readAllLines(doc);
    Matcher date = DATE.matcher(String.join("\n", lines));
    KeepAliveFigures f = parse(lines, "quoted from " + doc + (date.find() ? " (run of " + date.group(1) + ")" : ""));
    return f.renewalsPerSecond == null ? null : f;
  }

  /** Runs KeepAliveLoad in its own JVM (it starts its own Redis nodes and server) and reads its table. */
  static KeepAliveFigures run(Path serverJar, int streams, int seconds) throws IOException, InterruptedException {
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), KeepAliveLoad.class.getName(),
        "--streams", Integer.toString(streams), "--seconds", Integer.toString(seconds),
        "--server-jar", serverJar.toString());
    System.out.println("running " + String.join(" ", command.subList(3, command.size())));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    List<String> lines = new ArrayList<>();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null) {
        System.out.println("  keepalive| " + line);
        lines.add(line);
      }
    }
    int exit = p.waitFor();
    return parse(lines, "KeepAliveLoad --streams " + streams + " --seconds " + seconds + " in this run (exit " + exit + ")");
  }

  private static KeepAliveFigures parse(List<String> lines, String source) {
    String streams = null;
    String renewals = null;
    String lost = null;
    String verdict = null;
    for (String line : lines) {
      String value = cell(line);
      if (line.startsWith("| open KeepAlive streams |")) {
        if (streams != null) {
          break; // the first table only: docs/keepalive.md holds one per stream count, 10,000 first
        }
        streams = value;
      } else if (line.startsWith("| renewals per second")) {
        renewals = value;
      } else if (line.startsWith("| streams ended before the half-close (leases lost) |")) {
        lost = value;
      } else if (line.startsWith("PASS") || line.startsWith("FAIL")) {
        verdict = line;
      }
    }
    return new KeepAliveFigures(source, streams, renewals, lost, verdict);
  }

  private static String cell(String row) {
    String[] cells = row.split("\\|");
    return cells.length >= 3 ? cells[2].trim() : null;
  }
}
