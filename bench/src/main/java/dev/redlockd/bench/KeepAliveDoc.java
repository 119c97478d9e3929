package dev.redlockd.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.Locale;

/**
 * Places one KeepAliveLoad run in docs/keepalive.md as the section for its stream count,
 * between markers, so that a run at 100,000 streams does not erase the figures of a run at
 * 10,000 and the page's prose (kept in the file itself) is never rewritten by a load run.
 */
final class KeepAliveDoc {
  /** The page's prose after the runs begins here; a section not yet in the page goes before it. */
  private static final String AFTER_RUNS = "## How renewals are sent";

  private KeepAliveDoc() {}

  record Run(int streams, long ttlMs, long seconds, int nodes, int rate, int warmupSeconds, String redis,
      String loadBefore, String loadAfter, String table) {}

  static void write(Path doc, Run run) throws IOException {
    String begin = "<!-- keepalive-run: " + run.streams() + " streams -->";
    String end = "<!-- keepalive-run end: " + run.streams() + " streams -->";
    String section = begin + "\n" + section(run) + end + "\n";
    String page = Files.isReadable(doc) ? Files.readString(doc) : "# KeepAlive at scale\n\n";
    int from = page.indexOf(begin);
    int to = page.indexOf(end);
    String updated;
    if (from >= 0 && to > from) {
      updated = page.substring(0, from) + section + page.substring(page.indexOf('\n', to) + 1);
    } else {
      int at = page.indexOf(AFTER_RUNS);
      updated = at < 0 ? page + "\n" + section : page.substring(0, at) + section + "\n" + page.substring(at);
    }
    Files.createDirectories(doc.toAbsolutePath().getParent());
    Files.writeString(doc, updated);
    System.out.println("wrote the " + run.streams() + "-stream section of " + doc);
  }

  /** An open-rate sweep: {@code KeepAliveLoad --open-rate}, one section whatever the rates. */
  record Sweep(int streams, long ttlMs, long seconds, int nodes, java.util.List<Integer> rates, int warmupSeconds,
      String redis, String loadBefore, String loadAfter, String steal, String table) {}

  static final String SWEEP_BEGIN = "<!-- keepalive-open-rate -->";
  static final String SWEEP_END = "<!-- keepalive-open-rate end -->";

  /** Places the sweep as its own section (replacing the last sweep's), leaving the run sections and prose alone. */
  static void writeSweep(Path doc, Sweep sweep) throws IOException {
    String page = Files.isReadable(doc) ? Files.readString(doc) : "# KeepAlive at scale\n\n";
    Files.createDirectories(doc.toAbsolutePath().getParent());
    Files.writeString(doc, withSweep(page, sweep));
    System.out.println("wrote the open-rate section of " + doc);
  }

  static String withSweep(String page, Sweep sweep) {
    String section = SWEEP_BEGIN + "\n" + sweepSection(sweep) + SWEEP_END + "\n";
    int from = page.indexOf(SWEEP_BEGIN);
    int to = page.indexOf(SWEEP_END);
    if (from >= 0 && to > from) {
      int after = page.indexOf('\n', to);
      return page.substring(0, from) + section + (after < 0 ? "" : page.substring(after + 1));
    }
    int at = page.indexOf(AFTER_RUNS);
    return at < 0 ? page + "\n" + section : page.substring(0, at) + section + "\n" + page.substring(at);
  }

  private static String sweepSection(Sweep s) {
    return String.format(Locale.ROOT, """
        ## How fast streams may open: %,d streams, ttl %s

        <!-- untested: the command that measured this section; a load run, not part of the suite -->
        ```sh
        java %s-cp bench/target/redlockd-bench.jar dev.redlockd.bench.KeepAliveLoad \\
            --streams %d --ttl-ms %d --seconds %d --nodes %d --open-rate %s --warmup-seconds %d \\
            --write docs/keepalive.md
        ```

        - date: %s; commit: %s
        - machine: %d cores (%s), %s, %s
        - Redis: %s
        - load average (1/5/15 min) before: %s; after: %s; CPU steal during the sweep: %s

        For each rate, a fresh server on the same Redis nodes: the streams open at that rate (an
        Acquire, then a KeepAlive stream), are held for %d s, then half-closed. Opened and kept:
        granted and still open at the half-close. Refused early: answered UNAVAILABLE with a
        `grpc-retry-pushback-ms` trailer at least once, and retried by the load generator after
        the pushback plus up to half of it again. Lost: granted, then the stream ended before the
        half-close. Never opened: still refused (or failed) 60 s after its first Acquire.

        %s
        """, s.streams(), ttl(s.ttlMs()), serverJvmFlag(), s.streams(), s.ttlMs(), s.seconds(), s.nodes(),
        OpenRateSweep.rates(s.rates()), s.warmupSeconds(), LocalDate.now(), Machine.gitCommit(), Machine.cores(),
        Machine.cpuModel(), Machine.os(), Machine.jvm(), s.redis(), s.loadBefore(), s.loadAfter(), s.steal(),
        s.seconds(), s.table());
  }

  private static String section(Run run) {
    return String.format(Locale.ROOT, """
        ## %,d streams, ttl %s

        <!-- untested: the command that measured this section; a load run, not part of the suite -->
        ```sh
        java %s-cp bench/target/redlockd-bench.jar dev.redlockd.bench.KeepAliveLoad \\
            --streams %d --ttl-ms %d --seconds %d --nodes %d --rate %d --warmup-seconds %d \\
            --write docs/keepalive.md
        ```

        - date: %s; commit: %s
        - machine: %d cores (%s), %s, %s
        - Redis: %s
        - load average (1/5/15 min) before: %s; after: %s

        %s
        """, run.streams(), ttl(run.ttlMs()), serverJvmFlag(), run.streams(), run.ttlMs(), run.seconds(), run.nodes(), run.rate(),
        run.warmupSeconds(), LocalDate.now(), Machine.gitCommit(), Machine.cores(), Machine.cpuModel(), Machine.os(),
        Machine.jvm(), run.redis(), run.loadBefore(), run.loadAfter(), run.table());
  }

  /** The server JVM flags a run was given, as the command line that repeats it must give them. */
  private static String serverJvmFlag() {
    String flags = System.getProperty("bench.serverJvm", "").trim();
    return flags.isEmpty() ? "" : "-Dbench.serverJvm=\"" + flags + "\" \\\n    ";
  }

  private static String ttl(long ms) {
    return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
  }
}
