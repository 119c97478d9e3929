package dev.redlockd.server.metrics;

import dev.redlockd.engine.LockEngine;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The engine's clock watch: each step of a Redis node's wall clock this server saw (the node is
 * quarantined for it; a forward step is a safety event), and each node's clock rate against this
 * server's where one was measured, with the drift factor it must stay within.
 */
final class ClockMetrics {
  private ClockMetrics() {}

  static void register(PrometheusRegistry registry, LockEngine engine) {
    Counter steps = Counter.builder()
        .name("redlockd_node_clock_steps_total")
        .help("Steps of a Redis node's wall clock this server saw in the nodes' TIME, by direction: forward "
            + "(locks there may have expired early) or back (keys there live longer); the node is quarantined for "
            + "--max-ttl either way")
        .labelNames("node", "direction")
        .withoutExemplars()
        .register(registry);
    // Every node's series from the start, at 0: an alert on an increase sees the first step.
    for (String node : engine.nodeStates().keySet()) {
      steps.labelValues(node, "forward");
      steps.labelValues(node, "back");
    }
    engine.onClockStep(step -> steps.labelValues(step.node(), step.forward() ? "forward" : "back").inc());
    GaugeWithCallback.builder()
        .name("redlockd_node_clock_rate_difference")
        .help("A Redis node's clock rate against this server's monotonic clock, minus 1 (0.001: 0.1 % fast), "
            + "measured over a minute or more; beyond --drift-factor, validity does not cover it")
        .labelNames("node")
        .callback(cb -> engine.nodeClockRates().forEach((node, rate) -> cb.call(rate, node)))
        .register(registry);
    GaugeWithCallback.builder()
        .name("redlockd_drift_factor")
        .help("--drift-factor: the share of a ttl held back for clock rates that differ")
        .callback(cb -> cb.call(engine.config().driftFactor()))
        .register(registry);
  }
}
