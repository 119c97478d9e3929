package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * A node that restarted empty rejoins with a fencing floor taken from a quorum of the other
 * nodes: seeded from whichever nodes happened to answer, it could start below a fence already
 * granted, and a later grant over it could hand out a lower fence. Real Redis nodes; the wall
 * clock, the floor's other source, is held at zero (a replica whose clock is far behind).
 */
class FenceFloorTest {
  private static final Duration TTL = Duration.ofMillis(500);

  @Test
  void aRejoiningNodeWaitsForAQuorumOfTheOthersBeforeItsFloorIsSet() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      List<RedisNode> nodes = cluster.uris().stream()
          .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), Duration.ofMillis(200)))
          .toList();
      EngineConfig config = EngineHarness.testConfig().withMaxTtl(Duration.ofSeconds(1));
      try (LockEngine engine = LockEngine.builder(nodes, config).wallMicros(() -> 0L).build().start()) {
        // Node 1 refuses every grant (a stray lease sits there): the fences rise on nodes 0 and 2 only.
        cluster.call(1, "SET", "redlock:{floor}:lock", "someone-else", "PX", "60000");
        long granted = 0;
        for (int i = 0; i < 5; i++) {
          Grant lease = engine.acquire("floor", TTL, Duration.ofSeconds(2), "").join();
          granted = Math.max(granted, lease.fencingToken());
          engine.release("floor", lease.token()).join();
        }
        // Node 2 loses its data; node 0, the other holder of the highest fence, goes silent.
        cluster.call(1, "DEL", "redlock:{floor}:lock");
        cluster.restart(2);
        cluster.pause(0);
        Thread.sleep(config.maxTtl().toMillis() + 1_000); // node 2's quarantine is served meanwhile

        long floor = granted;
        for (int i = 0; i < 5; i++) {
          try {
            Grant lease = engine.acquire("floor", TTL, Duration.ZERO, "").join();
            assertThat(lease.fencingToken()).as("a fence granted while node 0 is silent").isGreaterThan(floor);
            engine.release("floor", lease.token()).join();
          } catch (CompletionException e) {
            assertThat(e).hasCauseInstanceOf(QuorumUnavailableException.class); // node 2 still waits
          }
          Thread.sleep(100);
        }

        cluster.resume(0);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
            assertThat(engine.nodeStates().values()).containsOnly(NodeState.UP));
        Grant after = engine.acquire("floor", TTL, Duration.ofSeconds(2), "").join();
        assertThat(after.fencingToken()).isGreaterThan(floor);
        engine.release("floor", after.token()).join();
      } finally {
        cluster.resumeAll();
        nodes.forEach(RedisNode::close);
      }
    }
  }
}
