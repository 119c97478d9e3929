package dev.redlockd.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading a frozen node's counters from a server's metrics, and the frozen-node table. */
class FrozenNodeTest {
  /** As a server serves it (docs/operating.md), two nodes, one of them frozen. */
  private static final String METRICS = """
      # HELP redlockd_node_errors_total Requests to a Redis node that failed
      # TYPE redlockd_node_errors_total counter
      redlockd_node_errors_total{node="127.0.0.1:38825",reason="error"} 0.0
      redlockd_node_errors_total{node="127.0.0.1:38825",reason="timeout"} 2.0
      redlockd_node_errors_total{node="127.0.0.1:40395",reason="error"} 0.0
      redlockd_node_errors_total{node="127.0.0.1:40395",reason="timeout"} 57.0
      redlockd_node_request_duration_seconds_bucket{node="127.0.0.1:40395",le="0.0001"} 0
      redlockd_node_request_duration_seconds_count{node="127.0.0.1:38825"} 19
      redlockd_node_request_duration_seconds_sum{node="127.0.0.1:38825"} 0.213413704
      redlockd_node_request_duration_seconds_count{node="127.0.0.1:40395"} 61
      redlockd_node_timeout_seconds 0.05

      redlockd_nodes 2.0
      """;

  @Test
  void parsesSamplesWithAndWithoutLabels() {
    List<ServerMetrics.Sample> samples = ServerMetrics.parse(METRICS);
    assertThat(samples).hasSize(10);
    assertThat(ServerMetrics.value(samples, "redlockd_nodes", Map.of())).isEqualTo(2.0);
    assertThat(ServerMetrics.value(samples, "redlockd_node_timeout_seconds", Map.of())).isEqualTo(0.05);
    assertThat(ServerMetrics.value(samples, "redlockd_node_errors_total",
        Map.of("reason", "timeout", "node", "127.0.0.1:38825"))).as("labels in any order").isEqualTo(2.0);
    assertThat(ServerMetrics.value(samples, "redlockd_node_errors_total", Map.of("node", "127.0.0.1:1")))
        .isNaN();
  }

  @Test
  void readsTheFrozenNodesRequestsAndTimeouts() {
    FrozenNode.Counts counts = FrozenNode.counts(ServerMetrics.parse(METRICS), "127.0.0.1:40395");
    assertThat(counts).isEqualTo(new FrozenNode.Counts(61, 57));
    assertThat(counts.minus(new FrozenNode.Counts(40, 38))).isEqualTo(new FrozenNode.Counts(21, 19));
  }

  @Test
  void leavesTheProbesOutOfWhatRoundsSent() {
    // 10 s of probes are 20 requests: a server whose rounds skip the node sends it no more.
    assertThat(new FrozenNode.Counts(20, 20).fromRounds(10)).isZero();
    assertThat(new FrozenNode.Counts(18, 18).fromRounds(10)).as("a probe still on its way").isZero();
    assertThat(new FrozenNode.Counts(20_020, 20_020).fromRounds(10)).isEqualTo(20_000);
  }

  @Test
  void tablesEachPointWithWhatItSentTheFrozenNode() {
    ClosedLoop.Point everyNode = point("redlockd", 32, 10.0, 1_000);
    ClosedLoop.Point thrifty = point("redlockd, thrifty rounds", 32, 10.0, 1_000);
    String table = FrozenNode.markdown(List.of(
        new FrozenNode.Row("redlockd", everyNode, new FrozenNode.Counts(2_020, 2_020),
            new FrozenNode.Counts(4_130, 4_100), 15),
        // Since the SIGSTOP 30 s passed, 60 probes: one round waited out the first timeout.
        new FrozenNode.Row("redlockd, thrifty rounds", thrifty, new FrozenNode.Counts(20, 20),
            new FrozenNode.Counts(61, 61), 30)));
    assertThat(table.lines().toList()).hasSize(4);
    assertThat(table).contains("| redlockd | 32 | 100 | 0.500 | 0.990 | 0 | 2,020 (2,020) | 2000.00 | 4,100 |");
    assertThat(table).contains("| redlockd, thrifty rounds | 32 | 100 | 0.500 | 0.990 | 0 | 20 (20) | 0.00 | 1 |");
  }

  /** {@code cycles} cycles of 0.001 .. cycles/1000 ms in {@code seconds}. */
  private static ClosedLoop.Point point(String system, int inFlight, double seconds, int cycles) {
    long[] nanos = new long[cycles];
    for (int i = 0; i < cycles; i++) {
      nanos[i] = (i + 1) * 1_000L;
    }
    return new ClosedLoop.Point(system, inFlight, seconds, new Latencies.Sorted(nanos), 0, null,
        new CpuProbe.Usage(0, 0, 0, 0, 0, -1, -1, null));
  }
}
