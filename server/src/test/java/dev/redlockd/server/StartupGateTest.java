package dev.redlockd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.engine.EngineConfig;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.NodeState;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The port opens once every node has answered, or after the bound when one never does. */
class StartupGateTest {
  private static final Duration BOUND = Duration.ofSeconds(2);

  private static long gatedMillis(RedisCluster cluster) {
    List<RedisNode> nodes = cluster.uris().stream()
        .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), Duration.ofMillis(50)))
        .toList();
    try (LockEngine engine = LockEngine.builder(nodes, EngineConfig.defaults()).build().start()) {
      long start = System.nanoTime();
      StartupGate.awaitNodes(engine, BOUND);
      long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      if (waited < BOUND.toMillis()) {
        assertThat(engine.nodeStates().values()).allMatch(s -> s == NodeState.UP || s == NodeState.BLANK);
      }
      return waited;
    } finally {
      nodes.forEach(RedisNode::close);
    }
  }

  @Test
  void opensAsSoonAsEveryNodeHasAnswered() {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      assertThat(gatedMillis(cluster)).isLessThan(BOUND.toMillis());
    }
  }

  @Test
  void opensAfterTheBoundWhenANodeNeverAnswers() {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      cluster.pause(2);
      try {
        assertThat(gatedMillis(cluster)).isBetween(BOUND.toMillis(), BOUND.toMillis() + 1000);
      } finally {
        cluster.resumeAll();
      }
    }
  }
}
