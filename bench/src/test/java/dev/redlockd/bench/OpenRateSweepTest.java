package dev.redlockd.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Metadata;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The open-rate sweep's section of docs/keepalive.md, its chart, and how the load generator reads a pushback. */
class OpenRateSweepTest {
  private static final String PAGE = """
      # KeepAlive at scale

      Prose before.

      <!-- keepalive-run: 10000 streams -->
      ## 10,000 streams, ttl 3 s

      | figure | value |
      | --- | --- |
      | open KeepAlive streams | 10,000 |
      | ttl (renewal every ttl/3) | 3000 ms |
      | renewals per second (HELD responses) | 9,911 (expected 10,000) |
      | Acquire round trip while opening | p50 3 ms, p90 14 ms, p99 40 ms, max 111 ms (10000 streams) |
      | from the Acquire answer to the stream's first answer | p50 5 ms, p90 22 ms, p99 53 ms, max 125 ms (10000 streams) |
      <!-- keepalive-run end: 10000 streams -->

      ## How renewals are sent

      Prose after.
      """;

  private static OpenRateSweep.Row row(int rate, int opened, int refused, int lost, int never) {
    return new OpenRateSweep.Row(rate, 10_000, opened, refused, refused * 2L, lost, never,
        "p50 1 ms, p90 6 ms, p99 18 ms, max 65 ms (10000 streams)", 20.0,
        GcPauses.parse(List.of("[1s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 9M->1M(50M) 12.5ms")),
        "0.44 0.78 1.15");
  }

  private static KeepAliveDoc.Sweep sweep(List<OpenRateSweep.Row> rows) {
    return new KeepAliveDoc.Sweep(10_000, 3000, 10, 5, List.of(500, 2000), 5, "redis-server 7.0.15", "0.44 0.78 1.15",
        "4.38 1.82 1.48", "0.0 %", OpenRateSweep.table(rows));
  }

  @Test
  void theSweepIsASectionOfItsOwnThatARerunReplacesAndTheRunSectionsAndProseStay() {
    String once = KeepAliveDoc.withSweep(PAGE, sweep(List.of(row(500, 10_000, 0, 0, 0))));
    assertThat(once).contains("<!-- keepalive-run: 10000 streams -->", "Prose before.", "Prose after.",
        "--open-rate 500,2000", "CPU steal during the sweep: 0.0 %", "load average (1/5/15 min) before: 0.44 0.78 1.15");
    assertThat(once.indexOf(KeepAliveDoc.SWEEP_BEGIN)).isLessThan(once.indexOf("## How renewals are sent"));
    assertThat(once).contains("| 500 | 10,000 | 10,000 | 0 (0 refusals) | 0 | 0 |");

    String twice = KeepAliveDoc.withSweep(once, sweep(List.of(row(500, 9_990, 10, 0, 0), row(2000, 5_914, 0, 4_086, 0))));
    assertThat(twice.split(KeepAliveDoc.SWEEP_BEGIN, -1)).hasSize(2);
    assertThat(twice).doesNotContain("| 500 | 10,000 | 10,000 |")
        .contains("| 500 | 10,000 | 9,990 | 10 (20 refusals) | 0 | 0 |")
        .contains("| 2,000 | 10,000 | 5,914 | 0 (0 refusals) | 4,086 | 0 |")
        .contains("Prose after.");
  }

  @Test
  void theCurveIsReadBackFromThePageAndDrawnWithTheRunCharts(@TempDir Path dir) throws Exception {
    Path doc = dir.resolve("keepalive.md");
    Files.writeString(doc, KeepAliveDoc.withSweep(PAGE,
        sweep(List.of(row(2000, 5_914, 0, 4_086, 0), row(500, 9_990, 10, 0, 0)))));

    List<KeepAliveCharts.OpenRate> rows = KeepAliveCharts.openRates(Files.readString(doc));
    assertThat(rows).containsExactly(new KeepAliveCharts.OpenRate(500, 9_990, 10, 0, 0),
        new KeepAliveCharts.OpenRate(2000, 5_914, 0, 4_086, 0));
    LineChart chart = KeepAliveCharts.openRateChart(rows);
    assertThat(chart.series()).extracting(LineChart.Series::name).containsExactly("opened and kept",
        "refused early (UNAVAILABLE with a pushback), retried", "lost (ended before the half-close)", "never opened");

    List<Path> written = KeepAliveCharts.write(doc);
    assertThat(written).extracting(p -> p.getFileName().toString())
        .containsExactly("keepalive-renewals.svg", "keepalive-open-latency.svg", "keepalive-open-rate.svg");
    String page = Files.readString(doc);
    assertThat(page).contains("![What becomes of streams opened at each rate: opened, refused early, lost]"
        + "(keepalive-open-rate.svg)");
    assertThat(page.indexOf(KeepAliveCharts.BEGIN)).isLessThan(page.indexOf("<!-- keepalive-run: 10000 streams -->"));
    assertThat(Files.readString(dir.resolve("keepalive-open-rate.svg"))).contains("<svg", "lost (ended before");
  }

  @Test
  void ratesAreAPositiveCommaList() {
    assertThat(OpenRateSweep.parseRates("250, 500,2000")).containsExactly(250, 500, 2000);
    assertThatThrownBy(() -> OpenRateSweep.parseRates("500,0")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void thePushbackIsReadFromAnUnavailablesTrailerOnly() {
    Metadata trailers = new Metadata();
    trailers.put(KeepAliveLoad.PUSHBACK, "240");
    assertThat(KeepAliveLoad.pushbackMillis(Status.UNAVAILABLE.asRuntimeException(trailers))).isEqualTo(240);
    assertThat(KeepAliveLoad.pushbackMillis(Status.UNAVAILABLE.asRuntimeException())).isEqualTo(-1);
    assertThat(KeepAliveLoad.pushbackMillis(Status.ABORTED.asRuntimeException(trailers))).isEqualTo(-1);
    for (int i = 0; i < 100; i++) {
      assertThat(KeepAliveLoad.withJitter(200)).isBetween(200L, 300L);
    }
  }
}
