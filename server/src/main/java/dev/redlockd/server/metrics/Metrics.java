package dev.redlockd.server.metrics;

import dev.redlockd.engine.LockEngine;
import dev.redlockd.node.RedisNode;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's Prometheus metrics, served over HTTP at {@code /metrics}. {@link #off()} is the
 * same face doing nothing, so with metrics off no request pays for them.
 *
 * <p>Each instance has its own registry: several servers in one JVM (tests) do not share counts.
 */
public final class Metrics implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Metrics.class);

  private final PrometheusRegistry registry;
  private final RpcMetrics rpcs;
  private final NodeMetrics nodes;
  private final Counter denials;
  private final Counter admissionRefusals;
  private final LeaseMeter leases;
  private volatile HTTPServer http;

  private Metrics(PrometheusRegistry registry, LongSupplier nanoClock) {
    this.registry = registry;
    this.rpcs = registry == null ? null : new RpcMetrics(registry, nanoClock);
    this.nodes = registry == null ? null : new NodeMetrics(registry, nanoClock);
    this.leases = registry == null ? LeaseMeter.NONE : new KeptLeaseMetrics(registry);
    this.denials = registry == null ? null : Counter.builder()
        .name("redlockd_access_denials_total")
        .help("Calls the access policy refused (UNAUTHENTICATED or PERMISSION_DENIED), by the caller's identity "
            + "(\"(none)\" when it had none) and RPC")
        .labelNames("identity", "rpc")
        .withoutExemplars()
        .register(registry);
    this.admissionRefusals = registry == null ? null : Counter.builder()
        .name("redlockd_admission_refused_total")
        .help("New Acquire calls and KeepAlive streams refused at once with UNAVAILABLE and a grpc-retry-pushback-ms "
            + "trailer because the engine's rounds ran later than --admission-latency, by RPC")
        .labelNames("rpc")
        .withoutExemplars()
        .register(registry);
    if (registry != null) {
      // At 0 from the start: an alert on their rate needs the series before the first refusal.
      admissionRefusals.initLabelValues("Acquire");
      admissionRefusals.initLabelValues("KeepAlive");
      // Every Prometheus client library's name for it: alert rules leave a replica's first minutes
      // out (its cold JVM's first requests are slow) and tell a restart from a replica that ran on.
      Gauge.builder()
          .name("process_start_time_seconds")
          .help("Start time of the process since unix epoch in seconds")
          .register(registry)
          .set(ManagementFactory.getRuntimeMXBean().getStartTime() / 1000.0);
    }
  }

  /** One new call refused by admission control. */
  public void admissionRefused(String rpc) {
    if (admissionRefusals != null) {
      admissionRefusals.labelValues(rpc).inc();
    }
  }

  /** One call the access policy refused. */
  public void denied(String identity, String rpc) {
    if (denials != null) {
      denials.labelValues(identity, rpc).inc();
    }
  }

  public static Metrics off() {
    return new Metrics(null, null);
  }

  public static Metrics on(LongSupplier nanoClock) {
    return new Metrics(new PrometheusRegistry(), nanoClock);
  }

  /** The node, timed and counted. */
  public RedisNode meter(RedisNode node) {
    return nodes == null ? node : nodes.meter(node);
  }

  /** The service, its calls counted by method and status code. */
  public ServerServiceDefinition meter(ServerServiceDefinition service) {
    return rpcs == null ? service : ServerInterceptors.intercept(service, rpcs);
  }

  /** Counts what happens to the leases streams keep. */
  public LeaseMeter leases() {
    return leases;
  }

  /**
   * Gauges over the engine's view of the nodes, its waiting Acquire calls and the open streams
   * (in all, and by kind), and the node timeout the node latencies are to be read against.
   */
  public void watch(LockEngine engine, IntSupplier openStreams, Supplier<Map<String, Long>> streamsByKind,
      Duration nodeTimeout) {
    if (registry != null) {
      EngineGauges.register(registry, engine, openStreams);
      ClockMetrics.register(registry, engine);
      EngineGauges.registerStreams(registry, streamsByKind, nodeTimeout);
    }
  }

  /** Serves {@code /metrics} on this address and port. */
  public void serve(InetAddress address, int port) throws IOException {
    if (registry == null) {
      return;
    }
    http = HTTPServer.builder().inetAddress(address).port(port).registry(registry).buildAndStart();
    log.info("redlockd metrics on port {} (http://<host>:{}/metrics)", http.getPort(), http.getPort());
  }

  /** The port /metrics is served on; 0 when it is not served. */
  public int port() {
    HTTPServer h = http;
    return h == null ? 0 : h.getPort();
  }

  @Override
  public void close() {
    HTTPServer h = http;
    if (h != null) {
      h.close();
    }
  }
}
