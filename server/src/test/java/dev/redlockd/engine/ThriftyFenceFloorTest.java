package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A thrifty grant on a resource none of its nodes has a counter for: each node saw only its
 * share of the other grants, so their fence-max differ, and each drawing its own fence-max + 1
 * would cost the grant a raise (raise.lua) of the lower ones. The round's floor (the replica's
 * wall clock in microseconds) makes the nodes draw the same fence; a floor below a node's
 * fence-max changes nothing there. Real Redis nodes; the wall clock is the test's.
 */
class ThriftyFenceFloorTest {
  private static final Duration TTL = Duration.ofSeconds(5);

  @Test
  void aNewResourceDrawsTheRoundsFloorOnEveryNodeAndAFloorBelowFenceMaxChangesNothing() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      List<RedisNode> nodes = cluster.uris().stream()
          .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), Duration.ofSeconds(1)))
          .toList();
      AtomicLong wall = new AtomicLong();
      EngineConfig config = EngineHarness.testConfig().withThriftyRounds(true);
      try (LockEngine engine = LockEngine.builder(nodes, config).wallMicros(wall::get).build().start()) {
        String fenceMax = config.keyPrefix() + "node:fence-max";
        for (int i = 0; i < 3; i++) {
          cluster.call(i, "SET", fenceMax, Long.toString(1000 * (i + 1))); // 1000, 2000, 3000
        }

        wall.set(10_000);
        Grant above = engine.acquire("floor-above", TTL, Duration.ZERO, "").join();
        assertThat(above.fencingToken()).as("every node drew the floor: nothing to raise").isEqualTo(10_000);
        engine.release("floor-above", above.token()).join();

        // The floor, now below every fence-max (which the grant above raised to 10,000 where it
        // went), leaves each node's own draw: fence-max + 1, agreed over the quorum as before.
        wall.set(0);
        Grant below = engine.acquire("floor-below", TTL, Duration.ZERO, "").join();
        assertThat(below.fencingToken()).isGreaterThan(10_000);
        engine.release("floor-below", below.token()).join();
      } finally {
        nodes.forEach(RedisNode::close);
      }
    }
  }
}
