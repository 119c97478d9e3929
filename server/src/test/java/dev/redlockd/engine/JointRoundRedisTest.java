package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.InstanceIds;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisIo;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The joint step over six real redis-server processes: OLD is nodes 0..4, NEW is 1..5 (node 0
 * removed, node 5 added), every key on five nodes. Three engines share them: one given OLD
 * alone, one OLD and NEW (--redis-next), one NEW alone. A grant of the joint engine excludes both
 * others'; a lease granted under OLD alone is moved onto node 5 by the joint engine's renewal.
 */
class JointRoundRedisTest {
  private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final List<String> IDS = List.of("n0", "n1", "n2", "n3", "n4", "n5");
  private static RedisCluster cluster;
  private static final List<RedisNode> nodes = new ArrayList<>();
  private static LockEngine oldAlone;
  private static LockEngine joint;
  private static LockEngine newAlone;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(6);
    for (String uri : cluster.uris()) {
      nodes.add(new NettyRedisNode(NodeAddress.parse(uri), Duration.ofMillis(200), RedisIo.shared(), null,
          new InstanceIds(), LockEngine.scriptBatch()));
    }
    EngineConfig config = EngineHarness.testConfig();
    // Every node joins as one new cluster (no node quarantined as restarted empty).
    joint = LockEngine.builder(nodes, config).nodeIds(IDS).membership(IDS.subList(0, 5), IDS.subList(1, 6))
        .nodesPerResource(5).build().start();
    oldAlone = LockEngine.builder(nodes.subList(0, 5), config).nodeIds(IDS.subList(0, 5)).build().start();
    newAlone = LockEngine.builder(nodes.subList(1, 6), config).nodeIds(IDS.subList(1, 6)).build().start();
    assertThat(joint.membershipChanging()).isTrue();
  }

  @AfterAll
  static void stop() {
    for (LockEngine engine : new LockEngine[] {joint, oldAlone, newAlone}) {
      if (engine != null) {
        engine.close();
      }
    }
    nodes.forEach(RedisNode::close);
    cluster.close();
  }

  private static String token() {
    return LockToken.generate(RANDOM);
  }

  private static String lockKey(String resource) {
    return "redlock:{" + resource + "}:lock";
  }

  @Test
  void aJointGrantExcludesAGrantUnderEitherListAlone() throws Exception {
    Grant lease = joint.acquire("both", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS);

    assertThatThrownBy(() -> oldAlone.acquire("both", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(LockHeldException.class);
    assertThatThrownBy(() -> newAlone.acquire("both", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(LockHeldException.class);
    assertThat(joint.release("both", lease.token()).get(5, TimeUnit.SECONDS)).isTrue();
    // Released on the nodes of both lists: either list alone may take it now.
    Grant again = newAlone.acquire("both", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS);
    assertThat(again.fencingToken()).isGreaterThan(lease.fencingToken());
  }

  @Test
  void aGrantUnderEitherListAloneExcludesAJointGrant() throws Exception {
    oldAlone.acquire("old", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS);
    newAlone.acquire("new", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS);

    assertThatThrownBy(() -> joint.acquire("old", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(LockHeldException.class);
    assertThatThrownBy(() -> joint.acquire("new", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(LockHeldException.class);
  }

  @Test
  void aQuorumOfTheOldSetIsNoJointGrantWhileTheNewSetIsHeld() throws Exception {
    // Another lease holds nodes 3, 4 and 5: a quorum of NEW, two nodes of OLD. Nodes 0, 1, 2
    // are free, a quorum of OLD: OLD alone would grant it, the joint step must not.
    for (int node = 3; node <= 5; node++) {
      cluster.call(node, "SET", lockKey("split"), token() + " 1 restored", "PX", "10000");
    }

    assertThatThrownBy(() -> joint.acquire("split", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(LockHeldException.class);
    for (int node = 0; node <= 2; node++) {
      assertThat(cluster.get(node, lockKey("split"))).as("node %d, cleaned up", node).isNull();
    }
  }

  @Test
  void aJointRenewalMovesALeaseGrantedUnderTheOldListOntoItsNewSet() throws Exception {
    Grant lease = oldAlone.acquire("kept", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS);
    assertThat(cluster.get(5, lockKey("kept"))).isNull();

    Grant renewed = joint.extend("kept", lease.token(), TTL).get(5, TimeUnit.SECONDS);

    assertThat(renewed.fencingToken()).isEqualTo(lease.fencingToken());
    assertThat(cluster.lockHolder(5, lockKey("kept"))).isEqualTo(lease.token());
    // Under NEW alone the lease is now renewed, and still excludes others.
    assertThat(newAlone.extend("kept", lease.token(), TTL).get(5, TimeUnit.SECONDS).fencingToken())
        .isEqualTo(lease.fencingToken());
    assertThatThrownBy(() -> newAlone.acquire("kept", TTL, Duration.ZERO, token()).get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(LockHeldException.class);
  }
}
