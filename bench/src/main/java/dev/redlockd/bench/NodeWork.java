package dev.redlockd.bench;

import java.util.List;

/**
 * What the nodes did for a stretch of a run, all nodes together: script calls, from the nodes'
 * own INFO commandstats, and the requests one server sent them with the time it waited for their
 * answers, from that server's metrics ({@code redlockd_node_request_duration_seconds}, every node
 * series summed; the node monitor's probes included). Counts, so they hold on a loaded machine.
 */
final class NodeWork {
  private final List<String> redisUris;
  private final ServerMetrics metrics;

  /** {@code metrics} null: the server's side is not read (NaN). */
  NodeWork(List<String> redisUris, ServerMetrics metrics) {
    this.redisUris = redisUris;
    this.metrics = metrics;
  }

  record Counts(long scripts, double requests, double requestSeconds) {
    Delta since(Counts earlier) {
      return new Delta(scripts - earlier.scripts, requests - earlier.requests,
          requestSeconds - earlier.requestSeconds);
    }
  }

  /** The work between two reads; the mean request time is from sent to answered, as the server saw it. */
  record Delta(long scripts, double requests, double requestSeconds) {
    double meanRequestMs() {
      return requests > 0 ? 1000 * requestSeconds / requests : Double.NaN;
    }
  }

  Counts read() {
    long scripts = RedisAdmin.work(redisUris).scripts();
    if (metrics == null) {
      return new Counts(scripts, Double.NaN, Double.NaN);
    }
    List<ServerMetrics.Sample> samples = metrics.scrape();
    return new Counts(scripts, sum(samples, "redlockd_node_request_duration_seconds_count"),
        sum(samples, "redlockd_node_request_duration_seconds_sum"));
  }

  private static double sum(List<ServerMetrics.Sample> samples, String name) {
    return samples.stream().filter(s -> s.name().equals(name)).mapToDouble(ServerMetrics.Sample::value).sum();
  }
}
