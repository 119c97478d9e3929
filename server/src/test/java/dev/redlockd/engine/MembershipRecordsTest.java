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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The records of a membership change over six real redis-server processes (OLD is nodes 0..4,
 * NEW is 1..5): a replica refuses to start, with one line, where the nodes show it would break
 * the change, and starts once the record in its way has expired.
 */
class MembershipRecordsTest {
  private static final List<String> IDS = List.of("n0", "n1", "n2", "n3", "n4", "n5");
  private static final Duration HEARTBEAT = Duration.ofMillis(100);
  /** Records then live max-ttl (1 s) + 2 heartbeats + drift: about 1.2 s. */
  private static final EngineConfig CONFIG = EngineHarness.testConfig().withMaxTtl(Duration.ofSeconds(1));
  private RedisCluster cluster;
  private final List<RedisNode> nodes = new ArrayList<>();
  private final List<LockEngine> engines = new ArrayList<>();

  @BeforeEach
  void start() {
    cluster = RedisCluster.start(6);
    for (String uri : cluster.uris()) {
      nodes.add(new NettyRedisNode(NodeAddress.parse(uri), Duration.ofMillis(200), RedisIo.shared(), null,
          new InstanceIds(), LockEngine.scriptBatch()));
    }
  }

  @AfterEach
  void stop() {
    engines.forEach(LockEngine::close);
    nodes.forEach(RedisNode::close);
    cluster.close();
  }

  private LockEngine oldAlone() {
    return started(LockEngine.builder(nodes.subList(0, 5), CONFIG).nodeIds(IDS.subList(0, 5)));
  }

  private LockEngine newAlone() {
    return started(LockEngine.builder(nodes.subList(1, 6), CONFIG).nodeIds(IDS.subList(1, 6)));
  }

  private LockEngine joint() {
    return started(LockEngine.builder(nodes, CONFIG).nodeIds(IDS).membership(IDS.subList(0, 5), IDS.subList(1, 6)));
  }

  private LockEngine started(LockEngine.Builder builder) {
    LockEngine engine = builder.recordMembership(true, HEARTBEAT).build().start();
    engines.add(engine);
    return engine;
  }

  private static void await(java.util.function.BooleanSupplier done, Duration within) throws InterruptedException {
    long until = System.nanoTime() + within.toNanos();
    while (!done.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waited %s", within).isLessThan(until);
      Thread.sleep(20);
    }
  }

  @Test
  void theNewListAloneIsRefusedWhileTheOldListAlonesRecordLivesAndStartsOnceItExpired() throws Exception {
    LockEngine old = oldAlone();
    old.checkMembership();
    LockEngine joint = joint();
    joint.checkMembership(); // the joint step may start beside OLD alone
    await(() -> joint.membershipOldAloneRemaining().toMillis() > 0, Duration.ofSeconds(2));

    assertThatThrownBy(() -> newAlone().checkMembership())
        .isInstanceOf(MembershipRefusedException.class)
        .hasMessageStartingWith("this replica runs --redis n1,n2,n3,n4,n5 alone (--nodes-per-resource 5) but the "
            + "nodes show replicas running --redis n0,n1,n2,n3,n4 alone (--nodes-per-resource 5) within the last 1 s;")
        .hasMessageContaining(" wait ")
        .hasMessageNotContaining("\n");

    old.close(); // the last replica of OLD alone stops: its record runs out
    await(() -> joint.membershipOldAloneRemaining().isZero(), Duration.ofSeconds(3));
    // A replica of OLD alone may not come back now: the change away from OLD has begun.
    assertThatThrownBy(() -> oldAlone().checkMembership())
        .isInstanceOf(MembershipRefusedException.class)
        .hasMessageContaining("--redis n0,n1,n2,n3,n4 --redis-next n1,n2,n3,n4,n5 (--nodes-per-resource 5)")
        .hasMessageContaining("start with --redis-next, or wait");
    // The refused start wrote its record before it read the others', as any start does: that
    // record too runs out before NEW alone may start.
    Thread.sleep(HEARTBEAT.toMillis() * 2);
    await(() -> joint.membershipOldAloneRemaining().isZero(), Duration.ofSeconds(3));
    newAlone().checkMembership();
  }

  @Test
  void addingANodeToListsOfEveryNodePerResourceIsNotRefused() {
    // Every resource on every node: a quorum of n0..n4 (3) and one of n0..n5 (4) always meet.
    started(LockEngine.builder(nodes.subList(0, 5), CONFIG).nodeIds(IDS.subList(0, 5))).checkMembership();
    started(LockEngine.builder(nodes, CONFIG).nodeIds(IDS)).checkMembership();
    // Five of six per resource: sets whose quorums need not meet, refused.
    assertThatThrownBy(() -> started(LockEngine.builder(nodes, CONFIG).nodeIds(IDS).nodesPerResource(5))
        .checkMembership()).isInstanceOf(MembershipRefusedException.class);
  }

  @Test
  void replicasOfOneListStartBesideEachOtherAndTheOtherListAloneIsRefused() {
    oldAlone().checkMembership();
    oldAlone().checkMembership(); // a rolling restart of OLD alone, before any change began

    assertThatThrownBy(() -> newAlone().checkMembership()).isInstanceOf(MembershipRefusedException.class);
  }
}
