package dev.redlockd.server.metrics;

import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.NodeState;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/** Gauges read from the engine and the stream registry at each scrape; nothing is kept here. */
final class EngineGauges {
  private EngineGauges() {}

  static void register(PrometheusRegistry registry, LockEngine engine, IntSupplier openStreams) {
    gauge(registry, "redlockd_nodes", "Redis nodes configured (N)", engine::nodeCount);
    gauge(registry, "redlockd_nodes_up", "Redis nodes that vote: they answer and hold their incarnation key",
        () -> count(engine, NodeState.UP));
    gauge(registry, "redlockd_nodes_quarantined",
        "Redis nodes that restarted empty, or whose clock stepped, and sit out until every lock they may have held "
            + "has expired",
        () -> count(engine, NodeState.QUARANTINED));
    gauge(registry, "redlockd_quorum_margin",
        "Voting nodes minus the quorum (N/2+1): how many more nodes may fail; below 0 calls fail UNAVAILABLE",
        () -> count(engine, NodeState.UP) - engine.quorum());
    gauge(registry, "redlockd_serving",
        "1 while this server's health is SERVING (a quorum of Redis nodes votes), else 0",
        () -> engine.quorumAvailable() ? 1 : 0);
    GaugeWithCallback.builder()
        .name("redlockd_node_up")
        .help("1 while this Redis node votes, else 0 (down, quarantined, or not yet probed)")
        .labelNames("node")
        .callback(cb -> engine.nodeStates().forEach((node, state) -> cb.call(state == NodeState.UP ? 1 : 0, node)))
        .register(registry);
    GaugeWithCallback.builder()
        .name("redlockd_membership_old_alone_remaining_seconds")
        .help("During a membership change (--redis-next): how long the nodes still hold the record of a replica "
            + "running the old list alone, so how long a lease it granted may be valid; step three (--redis NEW "
            + "alone) may start at 0. 0 outside a change")
        .callback(cb -> cb.call(engine.membershipOldAloneRemaining().toMillis() / 1000.0))
        .register(registry);
    gauge(registry, "redlockd_membership_conflict",
        "1 while the nodes hold the record of a replica whose node list(s) this one's would break a membership "
            + "change with (logged; see docs/operating.md), else 0",
        () -> engine.membershipConflict() ? 1 : 0);
    gauge(registry, "redlockd_keepalive_streams_open", "KeepAlive, Campaign and Observe streams open on this server", openStreams);
    gauge(registry, "redlockd_acquires_waiting",
        "Acquire calls with a wait under way on this server (limited by --max-waiting-acquires)",
        engine::waitingAcquires);
    GaugeWithCallback.builder()
        .name("redlockd_admission_lateness_seconds")
        .help("How long the engine's recent rounds waited for a quorum of Redis nodes (and renewals for the "
            + "scheduler), averaged over 100 ms: past --admission-latency, new Acquire and KeepAlive calls are refused")
        .callback(cb -> cb.call(engine.backlog().lateness().toNanos() / 1e9))
        .register(registry);
  }

  static void registerStreams(PrometheusRegistry registry, Supplier<Map<String, Long>> byKind, Duration nodeTimeout) {
    GaugeWithCallback.builder()
        .name("redlockd_streams_open")
        .help("Streams open on this server by kind: KeepAlive, Campaign, Observe")
        .labelNames("kind")
        .callback(cb -> byKind.get().forEach((kind, n) -> cb.call(n, kind)))
        .register(registry);
    GaugeWithCallback.builder()
        .name("redlockd_node_timeout_seconds")
        .help("--node-timeout: a Redis node request not answered within it fails (read node latencies against it)")
        .callback(cb -> cb.call(nodeTimeout.toNanos() / 1e9))
        .register(registry);
  }

  private static void gauge(PrometheusRegistry registry, String name, String help, IntSupplier value) {
    GaugeWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsInt())).register(registry);
  }

  private static int count(LockEngine engine, NodeState state) {
    return (int) engine.nodeStates().values().stream().filter(s -> s == state).count();
  }
}
