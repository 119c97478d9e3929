package dev.redlockd.bench;

import dev.redlockd.node.NodeAddress;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a SIGSTOPped node costs a server, read from the server's own metrics: the requests it
 * sent that node and how many of them timed out (each one a node timeout some round may have
 * waited for). The monitor's probe asks every node every 500 ms, so a server whose rounds no
 * longer ask the frozen node still sends it 2 requests a second; everything above that is rounds.
 */
final class FrozenNode {
  /** The node monitor's probes: every 500 ms, to every node (docs/operating.md, Metrics and logs). */
  static final double PROBES_PER_SECOND = 2;

  private final ServerMetrics metrics;
  private final String node;

  /** {@code redisUri} as given to {@code --redis}; the metrics name a node by host:port. */
  FrozenNode(ServerMetrics metrics, String redisUri) {
    this.metrics = metrics;
    NodeAddress address = NodeAddress.parse(redisUri);
    this.node = address.host() + ":" + address.port();
  }

  /** The frozen node's request and timeout counters so far. */
  record Counts(double requests, double timeouts) {
    Counts minus(Counts earlier) {
      return new Counts(requests - earlier.requests, timeouts - earlier.timeouts);
    }

    /** Requests above what the probe sends over {@code seconds}: the ones rounds sent. */
    double fromRounds(double seconds) {
      return Math.max(0, requests - PROBES_PER_SECOND * seconds);
    }
  }

  Counts read() {
    return counts(metrics.scrape(), node);
  }

  static Counts counts(List<ServerMetrics.Sample> samples, String node) {
    return new Counts(
        ServerMetrics.value(samples, "redlockd_node_request_duration_seconds_count", Map.of("node", node)),
        ServerMetrics.value(samples, "redlockd_node_errors_total", Map.of("node", node, "reason", "timeout")));
  }

  /**
   * One measured point with a frozen node: what the server sent it in the measured seconds, and
   * from the SIGSTOP to the end of the point ({@code secondsSinceStop} long), the first timeouts
   * included.
   */
  record Row(String system, ClosedLoop.Point point, Counts during, Counts sinceStop, double secondsSinceStop) {}

  /** The frozen-node table, in markdown. */
  static String markdown(List<Row> rows) {
    StringBuilder md = new StringBuilder();
    md.append("| system | in flight | cycles/s | p50 ms | p99 ms | errors | requests to the frozen node (timed out) "
        + "in the measured seconds | of them from rounds, per 1,000 cycles | requests from rounds since SIGSTOP |\n");
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (Row r : rows) {
      ClosedLoop.Point p = r.point();
      double cycles = p.latencies().count();
      md.append(String.format(Locale.ROOT, "| %s | %d | %,.0f | %s | %s | %d | %,.0f (%,.0f) | %s | %,.0f |%n",
          r.system(), p.inFlight(), p.cyclesPerSecond(), Report.ms(p.latencies().percentile(50)),
          Report.ms(p.latencies().percentile(99)), p.errors(), r.during().requests(), r.during().timeouts(),
          cycles == 0 ? "-" : String.format(Locale.ROOT, "%.2f", 1000 * r.during().fromRounds(p.seconds()) / cycles),
          r.sinceStop().fromRounds(r.secondsSinceStop())));
    }
    return md.toString();
  }
}
