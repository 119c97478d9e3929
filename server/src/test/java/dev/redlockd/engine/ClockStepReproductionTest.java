package dev.redlockd.engine;

import static dev.redlockd.engine.SteppedNodes.E;
import static dev.redlockd.engine.SteppedNodes.STEP;
import static dev.redlockd.engine.SteppedNodes.TTL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reproduction, on real redis-server nodes: a holder on exactly {A, B, E}, E's wall
 * clock stepped 30 s forward (its copy of the holder's key is gone at once), and a competitor
 * whose own round is the first to reach E after the step. The competitor must be refused, E
 * quarantined, and the step logged with its size; the holder's next renewal must say honestly
 * that {A, B} is no quorum. It prints what it saw. It uses only what the engine had before the
 * clock watch: copied onto such a checkout with {@link SteppedNodes},
 * {@code dev.redlockd.testing.SteppedClocks} and its {@code clockshim.c}, it shows the
 * competitor granted.
 */
class ClockStepReproductionTest {
  private static SteppedNodes nodes;
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

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
    scheduler.shutdownNow();
  }

  @Test
  void aStepForwardOnANodeOfTheHoldersQuorumGivesNoCompetitorTheLock() throws Exception {
    LockEngine replica = nodes.replica(Duration.ofMinutes(10), scheduler);
    Grant holder = nodes.holderOnABE(replica, "orders");
    long grantedAt = System.nanoTime();
    Grant everywhere = replica.acquire("stock", TTL, Duration.ZERO, "").join();

    // The engine's scheduler runs its probes: held, no probe runs between the step and the
    // competitor's round, which is then the first to see E's clock (the reproduction).
    CountDownLatch probesHeld = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    scheduler.execute(() -> {
      probesHeld.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    probesHeld.await();
    nodes.clocks.step(E, STEP);
    assertThat(nodes.clocks.call(E, "GET", "redlock:{orders}:lock")).as("E's copy of the holder's key").isNull();
    Throwable competitor;
    try {
      competitor = replica.acquire("orders", TTL, Duration.ZERO, "").handle((lease, failure) -> failure).join();
    } finally {
      release.countDown();
    }
    if (competitor instanceof CompletionException wrapped) {
      competitor = wrapped.getCause();
    }
    System.out.printf("holder granted on {A, B, E} with validity %d ms; E's clock stepped +%d s; %d ms later the "
        + "competitor's Acquire was %s%n", holder.validity().toMillis(), STEP.toSeconds(),
        (System.nanoTime() - grantedAt) / 1_000_000,
        competitor == null ? "GRANTED: two holders at once" : "refused (" + competitor + ")");
    assertThat(competitor).as("the competitor's Acquire").isInstanceOf(LockHeldException.class);
    assertThat(nodes.clocks.call(E, "GET", "redlock:{orders}:lock")).as("the competitor's write on E, taken back").isNull();
    List<String> errors = nodes.logged("clock stepped forward by");
    assertThat(errors).as("the step, logged at ERROR with its size").hasSize(1);
    assertThat(errors.get(0)).contains(nodes.nodeName(E)).containsPattern("by (29\\.9|30\\.0)\\d+ s")
        .contains("seen in an acquire round");
    System.out.println("what the server logged: " + errors.get(0));
    await().atMost(Duration.ofSeconds(10)).until(() -> replica.nodeStates().get(nodes.nodeName(E)) == NodeState.QUARANTINED);

    // The holder's quorum without E is not a quorum: its renewal says so, honestly.
    assertThatThrownBy(() -> replica.extend("orders", holder.token(), TTL).join())
        .hasCauseInstanceOf(LeaseNotHeldException.class);
    // A holder on every node keeps a quorum without E.
    assertThat(replica.extend("stock", everywhere.token(), TTL).join().fencingToken())
        .isEqualTo(everywhere.fencingToken());
    // E is quarantined on the node itself: every replica sees it.
    assertThat(nodes.clocks.call(E, "EXISTS", "redlock:node:incarnation")).isEqualTo(0L);
    assertThat(String.valueOf(nodes.clocks.call(E, "GET", "redlock:node:quarantine"))).matches("clock \\+(29|30)\\d{3}");
    assertThat((Long) nodes.clocks.call(E, "PTTL", "redlock:node:quarantine"))
        .isGreaterThan(EngineHarness.testConfig().maxTtl().toMillis() - 60_000);
  }
}
