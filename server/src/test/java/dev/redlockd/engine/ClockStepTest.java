package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.redlockd.node.InstanceIds;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisIo;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.SteppedClocks;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
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
import org.slf4j.LoggerFactory;

/**
 * A Redis host's wall clock steps while leases are held, on real redis-server nodes whose clocks
 * the test moves ({@link SteppedClocks}). Redis expires keys by that clock: a step forward on one
 * node of a holder's quorum frees the holder's key there at once. The node's vote must not count
 * for anyone, in the very round that sees the step, through any replica, and the node sits out
 * its quarantine.
 *
 * <p>Five nodes A..E. A holder is placed on exactly {A, B, E} by making C and D refuse writes
 * (maxmemory 1 with noeviction) during its Acquire, as in the reproduction.
 */
class ClockStepTest {
  private static final int A = 0;
  private static final int C = 2;
  private static final int D = 3;
  private static final int E = 4;
  private static final Duration TTL = Duration.ofSeconds(20);
  private static final Duration STEP = Duration.ofSeconds(30);
  /** Roomy: the machine may be loaded, and no claim here rests on the node timeout. */
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

  private static SteppedClocks clocks;
  private final List<LockEngine> engines = new ArrayList<>();
  private final List<RedisNode> nodes = new ArrayList<>();
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();

  @BeforeAll
  static void startNodes() {
    clocks = SteppedClocks.start(5);
  }

  @AfterAll
  static void stopNodes() {
    if (clocks != null) {
      clocks.close();
    }
  }

  @BeforeEach
  void watchTheLog() throws IOException {
    for (int i = 0; i < clocks.size(); i++) {
      clocks.call(i, "FLUSHALL");
    }
    log.start();
    ((Logger) LoggerFactory.getLogger(ClockWatch.class)).addAppender(log);
  }

  @AfterEach
  void stop() throws IOException {
    ((Logger) LoggerFactory.getLogger(ClockWatch.class)).detachAppender(log);
    engines.forEach(LockEngine::close);
    nodes.forEach(RedisNode::close);
    for (int i = 0; i < clocks.size(); i++) {
      clocks.call(i, "CONFIG", "SET", "maxmemory", "0");
    }
  }

  /**
   * A replica of its own over the nodes, started. {@code probeEvery}: a long one leaves every
   * check to the rounds themselves (and the probes they ask for), as between two probes.
   */
  private LockEngine replica(Duration probeEvery) {
    return replica(probeEvery, null);
  }

  /** {@link #replica(Duration)} on the given scheduler (null: the engine's own). */
  private LockEngine replica(Duration probeEvery, ScheduledExecutorService scheduler) {
    List<RedisNode> own = clocks.uris().stream()
        .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), NODE_TIMEOUT, RedisIo.shared(), null,
            new InstanceIds(), LockEngine.scriptBatch()))
        .toList();
    nodes.addAll(own);
    LockEngine.Builder builder = LockEngine.builder(own, EngineHarness.testConfig().withProbeInterval(probeEvery));
    if (scheduler != null) {
      builder.scheduler(scheduler);
    }
    LockEngine engine = builder.build().start();
    engines.add(engine);
    return engine;
  }

  /** Granted on exactly {A, B, E}: C and D refuse writes while the holder acquires. */
  private Grant holderOnABE(LockEngine engine, String resource) throws IOException {
    for (int node : new int[] {C, D}) {
      clocks.call(node, "CONFIG", "SET", "maxmemory-policy", "noeviction");
      clocks.call(node, "CONFIG", "SET", "maxmemory", "1");
    }
    Grant holder;
    try {
      holder = engine.acquire(resource, TTL, Duration.ZERO, "").join();
    } finally {
      for (int node : new int[] {C, D}) {
        clocks.call(node, "CONFIG", "SET", "maxmemory", "0");
      }
    }
    String key = "redlock:{" + resource + "}:lock";
    for (int i = 0; i < clocks.size(); i++) {
      Object value = clocks.call(i, "GET", key);
      assertThat(value != null && value.toString().startsWith(holder.token() + " "))
          .as("node %d holds the holder's key", i).isEqualTo(i != C && i != D);
    }
    return holder;
  }

  private String nodeName(int i) {
    return clocks.uris().get(i).substring("redis://".length());
  }

  private List<String> logged(String contains) {
    return log.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(contains)).toList();
  }

  @Test
  void aStepForwardOnANodeOfTheHoldersQuorumGivesNoCompetitorTheLock() throws Exception {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    try {
      stepForwardUnderAHolder(scheduler);
    } finally {
      scheduler.shutdownNow();
    }
  }

  private void stepForwardUnderAHolder(ScheduledExecutorService scheduler) throws Exception {
    LockEngine replica = replica(Duration.ofMinutes(10), scheduler);
    List<ClockStep> steps = new java.util.concurrent.CopyOnWriteArrayList<>();
    replica.onClockStep(steps::add);
    Grant holder = holderOnABE(replica, "orders");
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
    clocks.step(E, STEP);
    assertThat(clocks.call(E, "GET", "redlock:{orders}:lock")).as("E's copy of the holder's key").isNull();
    try {
      assertThatThrownBy(() -> replica.acquire("orders", TTL, Duration.ZERO, "").join())
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(LockHeldException.class);
    } finally {
      release.countDown();
    }
    assertThat(clocks.call(E, "GET", "redlock:{orders}:lock")).as("the competitor's write on E, taken back").isNull();
    List<String> errors = logged("clock stepped forward by");
    assertThat(errors).as("the step, logged at ERROR with its size").hasSize(1);
    assertThat(errors.get(0)).contains(nodeName(E)).containsPattern("by (29\\.9|30\\.0)\\d+ s")
        .contains("seen in an acquire round");
    System.out.println("what the server logged: " + errors.get(0));
    await().atMost(Duration.ofSeconds(10)).until(() -> replica.nodeStates().get(nodeName(E)) == NodeState.QUARANTINED);
    assertThat(steps).singleElement().satisfies(step -> {
      assertThat(step.node()).isEqualTo(nodeName(E));
      assertThat(step.size()).isBetween(STEP.minusSeconds(1), STEP.plusSeconds(1));
    });

    // The holder's quorum without E is not a quorum: its renewal says so, honestly.
    assertThatThrownBy(() -> replica.extend("orders", holder.token(), TTL).join())
        .hasCauseInstanceOf(LeaseNotHeldException.class);
    // A holder on every node keeps a quorum without E.
    assertThat(replica.extend("stock", everywhere.token(), TTL).join().fencingToken())
        .isEqualTo(everywhere.fencingToken());
    // E is quarantined on the node itself: every replica sees it.
    assertThat(clocks.call(E, "EXISTS", "redlock:node:incarnation")).isEqualTo(0L);
    assertThat(String.valueOf(clocks.call(E, "GET", "redlock:node:quarantine"))).startsWith("clock +30");
    assertThat((Long) clocks.call(E, "PTTL", "redlock:node:quarantine"))
        .isGreaterThan(EngineHarness.testConfig().maxTtl().toMillis() - 60_000);
  }

  @Test
  void aReplicaStartedAfterTheStepSeesItInTheClocksOthersRecorded() throws Exception {
    LockEngine first = replica(Duration.ofMillis(100));
    Grant holder = holderOnABE(first, "orders");
    // The first replica records every node's clock at its probes.
    await().atMost(Duration.ofSeconds(10)).until(() -> recordedNodes() == clocks.size());
    first.close(); // gone, with its history of the nodes' clocks
    clocks.step(E, STEP);

    LockEngine second = replica(Duration.ofMillis(100));
    await().atMost(Duration.ofSeconds(10)).until(() -> second.nodeStates().get(nodeName(E)) == NodeState.QUARANTINED);
    List<String> errors = logged("clock stepped forward by");
    assertThat(errors).hasSize(1);
    assertThat(errors.get(0)).contains(nodeName(E)).contains("comparison with the other nodes' clocks");
    System.out.println("what the replica started after the step logged: " + errors.get(0));
    assertThatThrownBy(() -> second.acquire("orders", TTL, Duration.ZERO, "").join())
        .hasCauseInstanceOf(LockHeldException.class);
    // The other nodes' clocks passed the same check: they vote.
    Grant elsewhere = second.acquire("stock", TTL, Duration.ZERO, "").join();
    assertThat(second.release("stock", elsewhere.token()).join()).isTrue();
    assertThat(holder.validity()).isGreaterThan(Duration.ofSeconds(15)); // still valid throughout
  }

  /** Nodes that hold a record of every node's clock. */
  private int recordedNodes() throws IOException {
    int recorded = 0;
    for (int i = 0; i < clocks.size(); i++) {
      Object record = clocks.call(i, "GET", "redlock:node:clocks");
      if (record != null && record.toString().split(" ").length == clocks.size()) {
        recorded++;
      }
    }
    return recorded;
  }

  @Test
  void aStepBackIsSeenAndQuarantinedWhileHoldersKeepTheirLeases() throws Exception {
    LockEngine replica = replica(Duration.ofMillis(100));
    Grant holder = replica.acquire("orders", TTL, Duration.ZERO, "").join();

    clocks.step(E, STEP.negated());
    assertThat((Long) clocks.call(E, "PTTL", "redlock:{orders}:lock")).as("E's copy lives on past its ttl")
        .isGreaterThan(TTL.toMillis());
    await().atMost(Duration.ofSeconds(10)).until(() -> replica.nodeStates().get(nodeName(E)) == NodeState.QUARANTINED);
    List<String> warnings = logged("clock stepped back by");
    assertThat(warnings).hasSize(1);
    assertThat(warnings.get(0)).contains(nodeName(E)).containsPattern("by (29\\.9|30\\.0)\\d+ s");
    System.out.println("what the server logged: " + warnings.get(0));
    // Keys on E only live longer; the holder renews on the four others, and nobody else gets it.
    assertThat(replica.extend("orders", holder.token(), TTL).join().fencingToken()).isEqualTo(holder.fencingToken());
    assertThatThrownBy(() -> replica.acquire("orders", TTL, Duration.ZERO, "").join())
        .hasCauseInstanceOf(LockHeldException.class);
  }

  @Test
  void aStepOnANodeThatHoldsNothingQuarantinesItAndLocksGoOnWithoutIt() throws Exception {
    LockEngine replica = replica(Duration.ofMillis(100));
    clocks.step(A, STEP);
    await().atMost(Duration.ofSeconds(10)).until(() -> replica.nodeStates().get(nodeName(A)) == NodeState.QUARANTINED);
    assertThat(logged("clock stepped forward by")).hasSize(1).allMatch(m -> m.contains("seen in a probe"));
    Grant lease = replica.acquire("orders", TTL, Duration.ZERO, "").join();
    assertThat(replica.release("orders", lease.token()).join()).isTrue();
    assertThat(replica.quorumAvailable()).isTrue();
  }
}
