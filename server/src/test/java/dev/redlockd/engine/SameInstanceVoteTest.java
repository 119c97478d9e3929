package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.redlockd.node.InstanceIds;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisIo;
import dev.redlockd.node.RedisNode;
import dev.redlockd.node.SameInstanceException;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Relay;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * Rule 2 when a node entry comes to reach another entry's instance while the server runs: that
 * instance's vote counts once, so neither a new lock nor the renewal of a held one can rest on
 * it counted twice.
 */
class SameInstanceVoteTest {
  private static final String TOKEN = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

  @Test
  void anInstanceReachedThroughTwoEntriesNeverMakesAQuorumAlone() {
    try (RedisCluster cluster = RedisCluster.start(3);
        Relay relay = new Relay(cluster.node(1).port())) {
      InstanceIds identities = new InstanceIds();
      Duration timeout = Duration.ofMillis(250);
      List<RedisNode> nodes = List.of(
          new NettyRedisNode(NodeAddress.parse(cluster.uris().get(0)), timeout, RedisIo.shared(), null, identities),
          new NettyRedisNode(NodeAddress.parse("redis://127.0.0.1:" + relay.port()), timeout, RedisIo.shared(), null,
              identities),
          new NettyRedisNode(NodeAddress.parse(cluster.uris().get(2)), timeout, RedisIo.shared(), null, identities));
      try (LockEngine engine = LockEngine.builder(nodes, EngineHarness.testConfig()).build().start()) {
        Grant held = engine.acquire("held", Duration.ofSeconds(30), Duration.ZERO, TOKEN).join();
        await().atMost(Duration.ofSeconds(5)).until(() -> TOKEN.equals(cluster.lockHolder(1, "redlock:{held}:lock")));

        // The second entry now leads to the first one's instance, and the third node stops answering.
        relay.retarget(cluster.node(0).port());
        cluster.pause(2);
        try {
          // The relay cut the second entry's connections: once it answers (or is refused), it has
          // reached the first one's instance anew.
          await().atMost(Duration.ofSeconds(10)).until(() -> reachedAgain(nodes.get(1)));
          // One instance holds the lease now: renewing it must fail, not count that instance twice.
          assertThatThrownBy(() -> engine.extend("held", held.token(), Duration.ofSeconds(30)).join())
              .isInstanceOf(CompletionException.class);
          // Nor may one instance grant a new lock alone.
          assertThatThrownBy(() -> engine.acquire("fresh", Duration.ofSeconds(30), Duration.ZERO, "").join())
              .isInstanceOf(CompletionException.class);
          assertThat(cluster.get(0, "redlock:{fresh}:lock")).isNull();
        } finally {
          cluster.resume(2);
        }
        // Three distinct instances again: it serves again.
        relay.retarget(cluster.node(1).port());
        await().atMost(Duration.ofSeconds(10)).until(engine::quorumAvailable);
        await().atMost(Duration.ofSeconds(10)).until(
            () -> engine.nodeStates().values().stream().allMatch(s -> s == NodeState.UP));
      } finally {
        nodes.forEach(RedisNode::close);
      }
    }
  }

  private static boolean reachedAgain(RedisNode node) {
    Throwable failure = node.command("PING").handle((reply, t) -> t).join();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SameInstanceException) {
        return true;
      }
    }
    return failure == null;
  }
}
