package dev.redlockd.engine;

import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
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
        .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), nodeTimeout))
        .toList();
    this.engine = LockEngine.builder(nodes, config).build().start();
  }

  static EngineHarness start(int nodes, EngineConfig config) {
    return start(nodes, config, Duration.ofMillis(50));
  }

  static EngineHarness start(int nodes, EngineConfig config, Duration nodeTimeout) {
    return new EngineHarness(RedisCluster.start(nodes), config, nodeTimeout);
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
