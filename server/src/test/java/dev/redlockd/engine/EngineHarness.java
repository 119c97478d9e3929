package dev.redlockd.engine;

import dev.redlockd.node.InstanceIds;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisIo;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.List;

/** An engine over real Redis nodes, closed with them. */
final class EngineHarness implements AutoCloseable {
  final RedisCluster cluster;
  final List<RedisNode> nodes;
  final LockEngine engine;

  private EngineHarness(RedisCluster cluster, EngineConfig config, Duration nodeTimeout) {
    this.cluster = cluster;
    this.nodes = cluster.uris().stream()
        // As the server makes them: the engine's scripts batched per node and loop pass.
        .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), nodeTimeout, RedisIo.shared(), null,
            new InstanceIds(), LockEngine.scriptBatch()))
        .toList();
    this.engine = LockEngine.builder(nodes, config).build().start();
  }

  static EngineHarness start(int nodes, EngineConfig config) {
    return start(nodes, config, Duration.ofMillis(50));
  }

  static EngineHarness start(int nodes, EngineConfig config, Duration nodeTimeout) {
    return new EngineHarness(RedisCluster.start(nodes), config, nodeTimeout);
  }

  /**
   * Waits until every node holds {@code lease} (lock key of the user's space), then returns it: a
   * grant comes once a quorum took it, and a test that then changes a slower node's key must
   * not have that node's own write land after its change.
   */
  Grant onEveryNode(Grant lease) {
    String key = "redlock:{" + lease.resource() + "}:lock";
    long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
    for (int i = 0; i < cluster.size(); i++) {
      while (!lease.token().equals(cluster.lockHolder(i, key))) {
        if (System.nanoTime() > until) {
          throw new AssertionError("node " + i + " never took the lease on " + lease.resource());
        }
        Thread.onSpinWait();
      }
    }
    return lease;
  }

  /** Calls of the engine's scripts per node so far (INFO commandstats): what a batch saved is counted, not timed. */
  long[] scriptCalls() {
    long[] calls = new long[cluster.size()];
    for (int n = 0; n < calls.length; n++) {
      String stats = String.valueOf(cluster.call(n, "INFO", "commandstats"));
      for (String line : stats.split("\r?\n")) {
        if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_fcall:")) {
          String c = line.substring(line.indexOf("calls=") + 6);
          calls[n] += Long.parseLong(c.substring(0, c.indexOf(',')));
        }
      }
    }
    return calls;
  }

  static EngineConfig testConfig() {
    return EngineConfig.defaults().withProbeInterval(Duration.ofMillis(100));
  }

  @Override
  public void close() {
    engine.close();
    nodes.forEach(RedisNode::close);
    cluster.close();
  }
}
