package dev.redlockd.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Charts drawn from the tables the benches write into their pages, and linked from the pages. */
class PageChartsTest {
  private static final String PERFORMANCE = """
      # Performance

      <!-- bench:begin -->
      ## Latest run

      ### 1 cycle in flight

      | system | cycles/s | p50 ms |
      | --- | ---: | ---: |
      | redlockd | 560 | 1.70 |
      | etcd | 480 | 2.00 |

      ### 32 cycles in flight

      | system | cycles/s | p50 ms |
      | --- | ---: | ---: |
      | redlockd | 3,641 | 8.35 |
      | etcd | 2,655 | 11.33 |

      ### Lock hand-off

      | figure | value |
      | --- | --- |
      | hand-off (Release sent -> next grant arrives) p50 | 1.30 ms |
      | hand-off p99 | 4.94 ms |
      | hand-off max | 8.71 ms |
      | two servers, release notices on (default): 2 clients, one per server, hand-offs to the other server's client, p50 / p99 | 2.43 ms / 9.02 ms (1,897 of 2,492) |
      <!-- bench:end -->

      ## How to read it
      """;

  private static final String KEEPALIVE = """
      # KeepAlive at scale

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

      <!-- keepalive-run: 100000 streams -->
      | figure | value |
      | --- | --- |
      | renewals per second (HELD responses) | 9,987 (expected 10,000) |
      | Acquire round trip while opening | p50 1 ms, p90 8 ms, p99 74 ms, max 319 ms (100000 streams) |
      <!-- keepalive-run end: 100000 streams -->

      ## How renewals are sent
      """;

  @TempDir
  Path dir;

  @Test
  void theCyclesChartHasOneSeriesPerSystemWithAPointPerLevel() {
    assertThat(PerformanceCharts.cycles(PERFORMANCE)).containsOnlyKeys("redlockd", "etcd");
    assertThat(PerformanceCharts.cycles(PERFORMANCE).get("redlockd")).containsEntry(1, 560.0).containsEntry(32, 3641.0);
    assertThat(PerformanceCharts.cyclesChart(PERFORMANCE).series()).extracting(LineChart.Series::name)
        .containsExactly("redlockd", "etcd");
    assertThat(PerformanceCharts.handOffChart(PERFORMANCE).series()).extracting(s -> s.points().size())
        .containsExactly(3, 2);
  }

  @Test
  void writingDrawsTheChartsBesideThePageAndLinksThemOnceAfterTheBenchBlock() throws Exception {
    Path doc = Files.writeString(dir.resolve("performance.md"), PERFORMANCE);
    List<Path> charts = PerformanceCharts.write(doc);
    PerformanceCharts.write(doc);

    assertThat(charts).extracting(p -> p.getFileName().toString())
        .containsExactly("performance-cycles.svg", "performance-handoff.svg");
    assertThat(Files.readString(charts.get(0))).startsWith("<?xml").contains("redlockd", "etcd");
    String page = Files.readString(doc);
    assertThat(page.split(PerformanceCharts.BEGIN, -1)).hasSize(2);
    assertThat(page.indexOf("](performance-cycles.svg)")).isBetween(page.indexOf(Report.END), page.indexOf("## How to read it"));
  }

  @Test
  void keepAliveChartsComeFromEveryRunSection() throws Exception {
    List<KeepAliveCharts.Run> runs = KeepAliveCharts.runs(KEEPALIVE);
    assertThat(runs).extracting(KeepAliveCharts.Run::streams).containsExactly(10_000, 100_000);
    assertThat(runs.get(0).renewalsPerSecond()).isEqualTo(9911);
    assertThat(runs.get(0).expected()).isEqualTo(10_000);
    assertThat(runs.get(1).first()).isNull();
    assertThat(KeepAliveCharts.openLatencyChart(runs).series()).extracting(LineChart.Series::name).containsExactly(
        "10,000 streams: Acquire round trip", "10,000 streams: to the stream's first answer",
        "100,000 streams: Acquire round trip");

    Path doc = Files.writeString(dir.resolve("keepalive.md"), KEEPALIVE);
    assertThat(KeepAliveCharts.write(doc)).extracting(p -> p.getFileName().toString())
        .containsExactly("keepalive-renewals.svg", "keepalive-open-latency.svg");
    String page = Files.readString(doc);
    assertThat(page.indexOf("](keepalive-renewals.svg)")).isLessThan(page.indexOf("<!-- keepalive-run: 10000"));
  }
}
