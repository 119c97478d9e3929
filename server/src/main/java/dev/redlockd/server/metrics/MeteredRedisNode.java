package dev.redlockd.server.metrics;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import dev.redlockd.node.Subscriber;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * A node that times each request and counts the failed ones, then hands back the node's own
 * future unchanged (cancelling it still reaches the node).
 */
final class MeteredRedisNode implements RedisNode {
  private final RedisNode node;
  private final LongSupplier nanoClock;
  private final DistributionDataPoint latency;
  private final CounterDataPoint timeouts;
  private final CounterDataPoint errors;

  MeteredRedisNode(RedisNode node, LongSupplier nanoClock, DistributionDataPoint latency, CounterDataPoint timeouts,
      CounterDataPoint errors) {
    this.node = node;
    this.nanoClock = nanoClock;
    this.latency = latency;
    this.timeouts = timeouts;
    this.errors = errors;
  }

  @Override
  public String name() {
    return node.name();
  }

  @Override
  public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
    long start = nanoClock.getAsLong();
    try {
      return timed(start, node.eval(script, keys, args));
    } catch (RuntimeException e) {
      errors.inc();
      throw e;
    }
  }

  @Override
  public CompletableFuture<Object> command(String... args) {
    long start = nanoClock.getAsLong();
    try {
      return timed(start, node.command(args));
    } catch (RuntimeException e) {
      errors.inc();
      throw e;
    }
  }

  @Override
  public Subscriber subscriber(Subscriber.Listener listener) {
    return node.subscriber(listener);
  }

  /** Times the call sent at {@code start}; no Supplier per call (one eval per node per round). */
  private CompletableFuture<Object> timed(long start, CompletableFuture<Object> reply) {
    reply.whenComplete((value, failure) -> {
      latency.observe((nanoClock.getAsLong() - start) / 1e9);
      if (failure != null) {
        (isTimeout(failure) ? timeouts : errors).inc();
      }
    });
    return reply;
  }

  private static boolean isTimeout(Throwable failure) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause() : failure;
    return cause instanceof TimeoutException;
  }

  @Override
  public void close() {
    node.close();
  }

  @Override
  public String toString() {
    return node.toString();
  }
}
