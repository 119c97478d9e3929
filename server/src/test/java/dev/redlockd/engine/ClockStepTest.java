package dev.redlockd.engine;

import static dev.redlockd.engine.SteppedNodes.A;
import static dev.redlockd.engine.SteppedNodes.E;
import static dev.redlockd.engine.SteppedNodes.STEP;
import static dev.redlockd.engine.SteppedNodes.TTL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A Redis host's wall clock steps, on real redis-server nodes whose clocks the test moves
 * ({@link SteppedNodes}): a replica started after a forward step sees it in the clocks others
 * recorded, a step back is seen and quarantined while holders keep their leases, and a step on a
 * node that holds nothing quarantines it while locks go on without it. The reproduction
 * itself is {@link ClockStepReproductionTest}.
 */
class ClockStepTest {
  private static SteppedNodes nodes;

  @BeforeAll
  static void startNodes() {
    nodes = new SteppedNodes();
  }

  @AfterAll
  static void stopNodes() {
    if (nodes != null) {
      nodes.close();
    }
  }

  @BeforeEach
  void reset() throws IOException {
    nodes.reset();
  }

  @AfterEach
  void stop() throws IOException {
    nodes.stopReplicas();
  }

  @Test
  void aReplicaStartedAfterTheStepSeesItInTheClocksOthersRecorded() throws Exception {
    LockEngine first = nodes.replica(Duration.ofMillis(100));
    Grant holder = nodes.holderOnABE(first, "orders");
    // The first replica records every node's clock at its probes.
    await().atMost(Duration.ofSeconds(10)).until(() -> recordedNodes() == nodes.clocks.size());
    first.close(); // gone, with its history of the nodes' clocks
    nodes.clocks.step(E, STEP);

    LockEngine second = nodes.replica(Duration.ofMillis(100));
    await().atMost(Duration.ofSeconds(10)).until(() -> second.nodeStates().get(nodes.nodeName(E)) == NodeState.QUARANTINED);
    // (A probe of the first replica still under way as it closed may have seen the step too.)
    List<String> errors = nodes.logged("comparison with the other nodes' clocks");
    assertThat(errors).hasSize(1);
    assertThat(errors.get(0)).contains(nodes.nodeName(E)).contains("clock stepped forward by");
    System.out.println("what the replica started after the step logged: " + errors.get(0));
    assertThatThrownBy(() -> second.acquire("orders", TTL, Duration.ZERO, "").join())
        .hasCauseInstanceOf(LockHeldException.class);
    // The other nodes' clocks passed the same check: they vote.
    Grant elsewhere = second.acquire("stock", TTL, Duration.ZERO, "").join();
    assertThat(second.release("stock", elsewhere.token()).join()).isTrue();
    assertThat(holder.validity()).isGreaterThan(Duration.ofSeconds(15)); // still valid throughout
  }

  /** Nodes that hold a record of every node's clock. */
  private static int recordedNodes() throws IOException {
    int recorded = 0;
    for (int i = 0; i < nodes.clocks.size(); i++) {
      Object record = nodes.clocks.call(i, "GET", "redlock:node:clocks");
      if (record != null && record.toString().split(" ").length == nodes.clocks.size()) {
        recorded++;
      }
    }
    return recorded;
  }

  @Test
  void aStepBackIsSeenAndQuarantinedWhileHoldersKeepTheirLeases() throws Exception {
    LockEngine replica = nodes.replica(Duration.ofMillis(100));
    Grant holder = replica.acquire("orders", TTL, Duration.ZERO, "").join();
    // The grant completes once a quorum said yes; E's own yes may still be on its way (it was,
    // once, in a fresh-clone run: E had no copy to outlive its ttl).
    await().atMost(Duration.ofSeconds(5))
        .until(() -> (Long) nodes.clocks.call(E, "PTTL", "redlock:{orders}:lock") > 0);

    nodes.clocks.step(E, STEP.negated());
    assertThat((Long) nodes.clocks.call(E, "PTTL", "redlock:{orders}:lock")).as("E's copy lives on past its ttl")
        .isGreaterThan(TTL.toMillis());
    await().atMost(Duration.ofSeconds(10)).until(() -> replica.nodeStates().get(nodes.nodeName(E)) == NodeState.QUARANTINED);
    List<String> warnings = nodes.logged("clock stepped back by");
    assertThat(warnings).hasSize(1);
    assertThat(warnings.get(0)).contains(nodes.nodeName(E)).containsPattern("by (29\\.9|30\\.0)\\d+ s");
    System.out.println("what the server logged: " + warnings.get(0));
    // Keys on E only live longer; the holder renews on the four others, and nobody else gets it.
    assertThat(replica.extend("orders", holder.token(), TTL).join().fencingToken()).isEqualTo(holder.fencingToken());
    assertThatThrownBy(() -> replica.acquire("orders", TTL, Duration.ZERO, "").join())
        .hasCauseInstanceOf(LockHeldException.class);
  }

  @Test
  void aStepOnANodeThatHoldsNothingQuarantinesItAndLocksGoOnWithoutIt() throws Exception {
    LockEngine replica = nodes.replica(Duration.ofMillis(100));
    List<ClockStep> steps = new java.util.concurrent.CopyOnWriteArrayList<>();
    replica.onClockStep(steps::add);
    nodes.clocks.step(A, STEP);
    await().atMost(Duration.ofSeconds(10)).until(() -> replica.nodeStates().get(nodes.nodeName(A)) == NodeState.QUARANTINED);
    assertThat(nodes.logged("clock stepped forward by")).hasSize(1).allMatch(m -> m.contains("seen in a probe"));
    assertThat(steps).singleElement().satisfies(step -> {
      assertThat(step.node()).isEqualTo(nodes.nodeName(A));
      assertThat(step.size()).isBetween(STEP.minusSeconds(1), STEP.plusSeconds(1));
    });
    Grant lease = replica.acquire("orders", TTL, Duration.ZERO, "").join();
    assertThat(replica.release("orders", lease.token()).join()).isTrue();
    assertThat(replica.quorumAvailable()).isTrue();
  }
}
