package dev.redlockd.server.metrics;

import dev.redlockd.node.RedisNode;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.LongSupplier;

/** Per Redis node: how long its requests take and how many fail. Labelled by host:port only. */
final class NodeMetrics {
  /** Around the default node timeout (50 ms): a healthy node answers in well under a millisecond. */
  private static final double[] SECONDS = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1};

  private final Histogram latency;
  private final Counter errors;
  private final LongSupplier nanoClock;

  NodeMetrics(PrometheusRegistry registry, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    this.latency = Histogram.builder()
        .name("redlockd_node_request_duration_seconds")
        .help("Time a Redis node took to answer a request (script or command), failures included")
        .labelNames("node")
        .classicOnly()
        .classicUpperBounds(SECONDS)
        .withoutExemplars()
        .register(registry);
    this.errors = Counter.builder()
        .name("redlockd_node_errors_total")
        .help("Requests to a Redis node that failed: reason timeout (no answer within --node-timeout) or error")
        .labelNames("node", "reason")
        .withoutExemplars()
        .register(registry);
  }

  RedisNode meter(RedisNode node) {
    String name = node.name();
    return new MeteredRedisNode(node, nanoClock, latency.labelValues(name),
        errors.labelValues(name, "timeout"), errors.labelValues(name, "error"));
  }
}
