package dev.redlockd.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Renders a {@link BenchRun}: tables per in-flight level, the hand-off and KeepAlive figures,
 * and the targets checked. The same Markdown is printed and, with --write, placed
 * between markers in the doc, so hand-written text around it survives the next run.
 */
final class Report {
  static final String BEGIN = "<!-- bench:begin -->";
  static final String END = "<!-- bench:end -->";

  private final BenchRun run;

  Report(BenchRun run) {
    this.run = run;
  }

  /** {@code ceiling}: what the target needs next to what the gRPC echo floor reaches at that level. */
  record Target(String what, String measured, String verdict, String ceiling) {}

  String markdown() {
    StringBuilder md = new StringBuilder();
    md.append("## Latest run\n\n");
    // The marker above each code block is docs/README.md's convention (DocCodeBlocksTest).
    md.append("<!-- untested: the command that measured this page; a load run, not part of the suite -->\n");
    md.append("```sh\n").append(run.commandLine).append("\n```\n\n");
    md.append(String.format(Locale.ROOT, """
        - date: %s; commit: %s; total runtime: %s
        - machine: %d cores (%s), %s, %s
        - Redis: %s, 5 nodes on 127.0.0.1, no persistence (`--save "" --appendonly no`)
        - etcd: %s
        - load average (1/5/15 min) before: %s; after: %s; CPU steal over the run: %.2f %%
        - each point: %d s warm-up, then %d s measured; each system first warmed up at 32 in flight for at least \
        %d s, until two 2 s windows agreed within 5 %% and the JIT compilers were quiet, or %d s had passed (how \
        long each took: the notes); at each level the systems take turns going first; one system at a time, never \
        two at once; FLUSHALL on every node between systems
        - all of it on the same %d cores: the load generator (this JVM, which also runs the in-process \
        clients), the redlockd or echo server JVM, the 5 Redis nodes and etcd
        """, run.date, run.commit, duration(run.totalSeconds), run.cores, run.cpuModel, run.os, run.jvm, run.redis,
        run.etcd, run.loadBefore, run.loadAfter, run.stealPercent, run.warmUpSeconds, run.secondsPerPoint, run.systemWarmUpSeconds,
        run.systemWarmUpMaxSeconds,
        run.cores));
    if (!run.busyAtStart.isEmpty()) {
      md.append("- **the machine was NOT quiet at the start** (these were running): ")
          .append(String.join("; ", run.busyAtStart)).append('\n');
    }
    for (String note : run.notes) {
      md.append("- ").append(note).append('\n');
    }
    md.append('\n');

    for (int level : run.levels) {
      md.append("### ").append(level).append(level == 1 ? " cycle" : " cycles").append(" in flight\n\n");
      md.append(levelTable(level)).append('\n');
    }
    md.append("""
        A cycle is one acquire and one release of a free lock (no contention); each cycle in flight \
        has its own resource name, reused with a fresh token (or Redisson thread id) every cycle. \
        p50 and p99 are over every cycle finished in the measured seconds. CPU is in cores (of %d), \
        from /proc over the measured seconds: the bench JVM (load generator and in-process clients) / \
        the server process (redlockd, echo or etcd; "-" where the client runs in process) / the 5 \
        Redis nodes together / everything else (kernel threads, other processes) = whole machine. \
        Context switches are counted on the whole machine (/proc/stat) and divided by the cycles.

        """.formatted(run.cores));

    md.append("### Lock hand-off\n\n");
    md.append(handOffTable()).append('\n');
    md.append("### KeepAlive renewals\n\n");
    md.append(keepAlive()).append('\n');
    md.append("### Targets\n\n");
    Table targets = new Table("target", "measured", "result", "needed vs gRPC echo floor at that level");
    for (Target t : targets()) {
      targets.row(t.what(), t.measured(), t.verdict(), t.ceiling());
    }
    md.append(targets.render()).append('\n');
    md.append("### How each row was measured\n\n");
    for (String system : BenchRun.ROWS) {
      String how = run.how.get(system);
      if (how != null) {
        md.append("- **").append(system).append("**: ").append(how).append('\n');
      }
    }
    return md.toString();
  }

  private String levelTable(int level) {
    ClosedLoop.Point redlockd = run.point(BenchRun.REDLOCKD, level);
    Table t = new Table("system", "cycles/s", "p50 ms", "p99 ms", "errors", "redlockd / system (cycles/s)",
        "CPU: bench / server / Redis / other = machine", "context switches / cycle").right(1, 2, 3, 4, 5, 7);
    for (String system : BenchRun.ROWS) {
      ClosedLoop.Point p = run.point(system, level);
      if (p == null) {
        continue;
      }
      String ratio = system.equals(BenchRun.REDLOCKD) || redlockd == null ? "" : times(
          redlockd.cyclesPerSecond() / p.cyclesPerSecond());
      CpuProbe.Usage cpu = p.cpu();
      t.row(system, String.format(Locale.ROOT, "%,.0f", p.cyclesPerSecond()), ms(p.latencies().percentile(50)),
          ms(p.latencies().percentile(99)), Long.toString(p.errors()), ratio,
          String.format(Locale.ROOT, "%.2f / %s / %.2f / %.2f = %.2f", cpu.generator(),
              Double.isNaN(cpu.server()) ? "-" : String.format(Locale.ROOT, "%.2f", cpu.server()), cpu.redis(),
              cpu.other(), cpu.machine()),
          String.format(Locale.ROOT, "%.0f", cpu.contextSwitchesPerSecond() / p.cyclesPerSecond()));
    }
    StringBuilder out = new StringBuilder(t.render());
    for (String system : BenchRun.ROWS) {
      ClosedLoop.Point p = run.point(system, level);
      if (p != null && p.firstError() != null) {
        out.append("\n").append(system).append(", first error: `").append(p.firstError()).append("`\n");
      }
    }
    return out.toString();
  }

  private String handOffTable() {
    HandOff.Result h = run.handOff;
    if (h == null) {
      return "not measured in this run\n";
    }
    Table t = new Table("figure", "value");
    t.row("clients queued on one resource, one server", Integer.toString(h.clients()));
    t.row("each holds the lock for", String.format(Locale.ROOT, "%.1f ms, then Releases and queues again",
        h.holdMs()));
    t.row("Acquire wait", "5 s (ttl 10 s)");
    t.row("hand-offs measured", String.format(Locale.ROOT, "%,d in %.0f s (%,.0f per second)",
        h.handOffs().count(), h.seconds(), h.perSecond()));
    t.row("hand-off (Release sent -> next grant arrives) p50", ms(h.handOffs().percentile(50)) + " ms");
    t.row("hand-off p99", ms(h.handOffs().percentile(99)) + " ms");
    t.row("hand-off max", ms(h.handOffs().percentile(100)) + " ms");
    t.row("Acquire calls that waited the whole 5 s (ABORTED)", Long.toString(h.timedOut()));
    t.row("other errors", Long.toString(h.errors()));
    across(t, "release notices on (default)", run.handOffAcross);
    across(t, "`--notify-waiters false` (before notices)", run.handOffAcrossSilent);
    return t.render();
  }

  /** Hand-offs whose grant came through the other server than the Release. */
  private static void across(Table t, String how, HandOff.Across a) {
    if (a == null) {
      return;
    }
    HandOff.Result pair = a.pair();
    t.row("two servers, " + how + ": 2 clients, one per server, hand-offs to the other server's client, p50 / p99",
        ms(pair.acrossServers().percentile(50)) + " ms / " + ms(pair.acrossServers().percentile(99)) + " ms ("
        + String.format(Locale.ROOT, "%,d of %,d hand-offs; the others went back to the releasing client, which "
            + "queues again at once; %d waited out, %d errors", pair.acrossServers().count(),
            pair.handOffs().count(), pair.timedOut(), pair.errors()) + ")");
    HandOff.Result spread = a.spread();
    t.row("two servers, " + how + ": " + spread.clients() + " clients over both, grants through the other server",
        String.format(Locale.ROOT, "%,d of %,d hand-offs (%.0f %%), p50 %s ms, p99 %s ms",
            spread.acrossServers().count(), spread.handOffs().count(),
            100.0 * spread.acrossServers().count() / Math.max(1, spread.handOffs().count()),
            ms(spread.acrossServers().percentile(50)), ms(spread.acrossServers().percentile(99))));
  }

  private String keepAlive() {
    KeepAliveFigures k = run.keepAlive;
    if (k == null) {
      return "Not run, and no docs/keepalive.md to quote. Measure it with:\n\n"
          + "<!-- untested: a load run, not part of the suite -->\n```sh\n" + KeepAliveFigures.COMMAND
          + "\n```\n";
    }
    return String.format(Locale.ROOT, """
        %s renewals per second at %s KeepAlive streams, %s leases lost (%s%s). \
        LockCycleBench does not re-implement this; `--keepalive` runs KeepAliveLoad for 30 s as a last \
        phase, and the full figure comes from:

        <!-- untested: a load run, not part of the suite -->
        ```sh
        %s
        ```
        """, k.renewalsPerSecond(), k.streams(), k.lost(), k.source(),
        k.verdict() == null ? "" : "; " + k.verdict(), KeepAliveFigures.COMMAND);
  }

  List<Target> targets() {
    List<Target> out = new ArrayList<>();
    ClosedLoop.Point r32 = run.point(BenchRun.REDLOCKD, 32);
    ClosedLoop.Point r128 = run.point(BenchRun.REDLOCKD, 128);
    ClosedLoop.Point r1 = run.point(BenchRun.REDLOCKD, 1);
    ClosedLoop.Point redLock32 = run.point(BenchRun.REDISSON_REDLOCK, 32);
    ClosedLoop.Point etcd32 = run.point(BenchRun.ETCD, 32);
    out.add(redisCpuPerCycle(r128, 50));
    out.add(serverCpuPerCycle(r128, 60));
    ClosedLoop.Point lock128 = run.point(BenchRun.REDISSON_LOCK, 128);
    out.add(atLeast("at 128 in flight, redlockd >= 1.0x Redisson RLock (1 node) (cycles/s)", r128, lock128, 1.0, 128));
    out.add(atLeast("at 32 in flight, redlockd >= 6x RedissonRedLock (cycles/s)", r32, redLock32, 6, 32));
    out.add(atLeast("at 32 in flight, redlockd >= 3x etcd (cycles/s)", r32, etcd32, 3, 32));
    ClosedLoop.Point echo1 = run.point(BenchRun.ECHO, 1);
    ClosedLoop.Point floor1 = run.point(BenchRun.FLOOR, 1);
    String latency = "p50 at 1 in flight: redlockd <= 2.5 x (two gRPC echo round trips + one-node floor)";
    if (r1 == null || echo1 == null || floor1 == null) {
      out.add(skipped(latency));
    } else {
      long bound = echo1.latencies().percentile(50) + floor1.latencies().percentile(50);
      long redlockd = r1.latencies().percentile(50);
      out.add(new Target(latency, String.format(Locale.ROOT,
          "bound = %s + %s = %s ms; 2.5 x bound = %s ms; redlockd %s ms = %.2f x bound",
          ms(echo1.latencies().percentile(50)), ms(floor1.latencies().percentile(50)), ms(bound),
          ms(bound * 5 / 2), ms(redlockd), (double) redlockd / bound), verdict(redlockd * 2 <= bound * 5), "-"));
    }
    HandOff.Result h = run.handOff;
    String handOff = "lock hand-off p50 < 2 ms";
    out.add(h == null ? skipped(handOff)
        : new Target(handOff, ms(h.handOffs().percentile(50)) + " ms",
            verdict(h.handOffs().count() > 0 && h.handOffs().percentile(50) < 2_000_000), "-"));
    return out;
  }

  /** The 5 Redis nodes' CPU together over the measured seconds, per cycle: what the scripts and their calls cost. */
  private Target redisCpuPerCycle(ClosedLoop.Point redlockd, double maxMicros) {
    String what = String.format(Locale.ROOT, "at 128 in flight, Redis CPU (5 nodes together) <= %.0f us per cycle",
        maxMicros);
    if (redlockd == null || redlockd.cpu() == null || Double.isNaN(redlockd.cpu().redis())) {
      return skipped(what);
    }
    double micros = redlockd.cpu().redis() / redlockd.cyclesPerSecond() * 1e6;
    ClosedLoop.Point lock = run.point(BenchRun.REDISSON_LOCK, 128);
    String peer = lock == null || lock.cpu() == null ? ""
        : String.format(Locale.ROOT, "; Redisson RLock's one node %.0f us", lock.cpu().redis() / lock.cyclesPerSecond() * 1e6);
    return new Target(what, String.format(Locale.ROOT, "%.2f cores / %,.0f cycles/s = %.0f us%s", redlockd.cpu().redis(),
        redlockd.cyclesPerSecond(), micros, peer), verdict(micros <= maxMicros), "-");
  }

  /** The server process's CPU over the measured seconds, per cycle: what the engine and transport cost. */
  private Target serverCpuPerCycle(ClosedLoop.Point redlockd, double maxMicros) {
    String what = String.format(Locale.ROOT, "at 128 in flight, redlockd server CPU <= %.0f us per cycle", maxMicros);
    if (redlockd == null || redlockd.cpu() == null || Double.isNaN(redlockd.cpu().server())) {
      return skipped(what);
    }
    double micros = redlockd.cpu().server() / redlockd.cyclesPerSecond() * 1e6;
    ClosedLoop.Point echo = run.point(BenchRun.ECHO, 128);
    String echoMicros = echo == null || echo.cpu() == null ? ""
        : String.format(Locale.ROOT, "; the echo server's two calls %.0f us", echo.cpu().server() / echo.cyclesPerSecond() * 1e6);
    return new Target(what, String.format(Locale.ROOT, "%.2f cores / %,.0f cycles/s = %.0f us%s", redlockd.cpu().server(),
        redlockd.cyclesPerSecond(), micros, echoMicros), verdict(micros <= maxMicros), "-");
  }

  private Target atLeast(String what, ClosedLoop.Point redlockd, ClosedLoop.Point other, double factor, int level) {
    if (redlockd == null || other == null) {
      return skipped(what);
    }
    double ratio = redlockd.cyclesPerSecond() / other.cyclesPerSecond();
    return new Target(what, String.format(Locale.ROOT, "%,.0f vs %,.0f cycles/s = %s", redlockd.cyclesPerSecond(),
        other.cyclesPerSecond(), times(ratio)), verdict(ratio >= factor && redlockd.errors() == 0),
        ceiling(other.cyclesPerSecond() * factor, level));
  }

  /**
   * A throughput target next to what two bare gRPC round trips reach at the same level on the
   * same cores: no gRPC lock service can beat that, so a target above it cannot pass here.
   */
  private String ceiling(double needed, int level) {
    ClosedLoop.Point echo = run.point(BenchRun.ECHO, level);
    if (echo == null) {
      return String.format(Locale.ROOT, "needs %,.0f/s", needed);
    }
    return String.format(Locale.ROOT, "needs %,.0f/s; echo does %,.0f/s", needed, echo.cyclesPerSecond());
  }

  private static Target skipped(String what) {
    return new Target(what, "not measured", "SKIPPED", "-");
  }

  private static String verdict(boolean pass) {
    return pass ? "PASS" : "FAIL";
  }

  private static String times(double ratio) {
    return String.format(Locale.ROOT, ratio >= 10 ? "%.0fx" : "%.2fx", ratio);
  }

  /** Milliseconds with the digits that matter at each scale. */
  static String ms(long nanos) {
    double ms = nanos / 1e6;
    if (ms < 1) {
      return String.format(Locale.ROOT, "%.3f", ms);
    }
    if (ms < 100) {
      return String.format(Locale.ROOT, "%.2f", ms);
    }
    return String.format(Locale.ROOT, "%.0f", ms);
  }

  static String duration(double seconds) {
    return String.format(Locale.ROOT, "%d min %02d s", (long) seconds / 60, (long) seconds % 60);
  }

  /**
   * Puts the generated Markdown between the markers of an existing doc (text outside them is
   * kept), appends a marked block to a doc without markers, or creates the doc with a short intro.
   */
  void write(Path doc) throws IOException {
    String block = BEGIN + "\n" + markdown() + END;
    String text;
    if (Files.exists(doc)) {
      String old = Files.readString(doc);
      int begin = old.indexOf(BEGIN);
      int end = old.indexOf(END);
      if (begin >= 0 && end > begin) {
        text = old.substring(0, begin) + block + old.substring(end + END.length());
      } else {
        text = old + (old.endsWith("\n") ? "\n" : "\n\n") + block + "\n";
      }
    } else {
      text = """
          # Performance

          A full lock cycle (acquire, then release) through redlockd, side by side with Redisson's
          Redlock, Redisson's single-node lock, etcd's lock service and two floors (the cheapest
          Redis lock on one node, and two bare gRPC round trips), all measured in one run on the
          same 5 local Redis nodes. Everything between the `bench:` markers is written by:

          <!-- untested: a load run, not part of the suite -->
          ```sh
          mvn -B -q -DskipTests -pl bench -am package
          java -cp bench/target/redlockd-bench.jar dev.redlockd.bench.LockCycleBench --write docs/performance.md
          ```

          """ + block + "\n";
    }
    Files.createDirectories(doc.toAbsolutePath().getParent());
    Files.writeString(doc, text);
  }
}
