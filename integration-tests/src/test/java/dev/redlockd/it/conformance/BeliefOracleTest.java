package dev.redlockd.it.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.RespClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The belief oracle on real nodes: it fails a client that believes longer than a quorum holds, and only that. */
class BeliefOracleTest {
  private static RedisCluster cluster;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(3);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static List<Integer> ports() {
    return cluster.uris().stream().map(uri -> Integer.parseInt(uri.substring(uri.lastIndexOf(':') + 1))).toList();
  }

  private static BeliefOracle.Belief belief(double remainingMs) {
    long now = System.nanoTime();
    JsonObject event = new JsonObject();
    event.addProperty("event", "belief");
    event.addProperty("handle", "lease");
    event.addProperty("valid", true);
    event.addProperty("remaining_ms", remainingMs);
    event.addProperty("mono_ns", Long.toString(now));
    return BeliefOracle.Belief.of(event, now);
  }

  private static BeliefOracle.Belief end() {
    long now = System.nanoTime();
    JsonObject event = new JsonObject();
    event.addProperty("event", "belief-end");
    event.addProperty("handle", "lease");
    event.addProperty("mono_ns", Long.toString(now));
    return BeliefOracle.Belief.of(event, now);
  }

  /** Beliefs every 20 ms for {@code count} rounds, each claiming what {@code remaining} says then. */
  private static List<BeliefOracle.Belief> report(int count, java.util.function.IntToDoubleFunction remaining)
      throws InterruptedException {
    List<BeliefOracle.Belief> beliefs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      beliefs.add(belief(remaining.applyAsDouble(i)));
      Thread.sleep(20);
    }
    beliefs.add(end());
    return beliefs;
  }

  @Test
  void aBeliefWithinWhatAQuorumHoldsPassesAndOneBeyondItFails() throws Exception {
    long setAt = System.nanoTime(); // before the SETs: the nodes hold the key at least 1 s from here
    for (int i = 0; i < 3; i++) {
      cluster.call(i, "SET", "oracle-key", "t", "PX", "1000");
    }
    try (BeliefOracle oracle = new BeliefOracle(ports(), 2, Map.of("lease", "oracle-key"))) {
      Thread.sleep(60);
      // Honest: at most the time left on the nodes, less a drift allowance.
      List<BeliefOracle.Belief> honest = report(10, i -> 1000 - (System.nanoTime() - setAt) / 1e6 - 15);
      oracle.close();
      var verdict = oracle.judge(honest, List.of("lease"), 5).get(0);
      assertThat(verdict.judged()).isGreaterThanOrEqualTo(5);
      assertThat(verdict.largestExcessMs()).isNegative();
    }
  }

  @Test
  void aClientThatBelievesLongerThanTheNodesHoldIsCaught() throws Exception {
    // The first bug: the nodes hold the key 300 ms, the client believes 5 s.
    for (int i = 0; i < 3; i++) {
      cluster.call(i, "SET", "oracle-stale", "t", "PX", "300");
    }
    try (BeliefOracle oracle = new BeliefOracle(ports(), 2, Map.of("lease", "oracle-stale"))) {
      Thread.sleep(60);
      List<BeliefOracle.Belief> stale = report(30, i -> 5_000);
      oracle.close();
      assertThatThrownBy(() -> oracle.judge(stale, List.of("lease"), 1))
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("longer than a quorum of nodes held its key");
    }
  }

  @Test
  void aMinorityHoldingLongerDoesNotCount() throws Exception {
    // One of three nodes holds the key for 5 s, the others for 200 ms: a quorum (2) holds 200 ms.
    cluster.call(0, "SET", "oracle-minority", "t", "PX", "5000");
    cluster.call(1, "SET", "oracle-minority", "t", "PX", "200");
    cluster.call(2, "SET", "oracle-minority", "t", "PX", "200");
    try (BeliefOracle oracle = new BeliefOracle(ports(), 2, Map.of("lease", "oracle-minority"))) {
      Thread.sleep(60);
      List<BeliefOracle.Belief> beliefs = report(5, i -> 2_000);
      oracle.close();
      assertThatThrownBy(() -> oracle.judge(beliefs, List.of("lease"), 1)).isInstanceOf(AssertionError.class);
    }
  }

  /**
   * The hog run's false alarm: a renewal landed between a node's last reading and its SIGSTOP.
   * A script renews the key nonstop, each time a second further out; the oracle's last reading of
   * the frozen node must be what the node holds while frozen, read after SIGCONT before its
   * writes are let through. An unseen renewal would put the two a second or more apart.
   */
  @Test
  void aFrozenNodesLastReadingIsWhatItHoldsWhileFrozen() throws Exception {
    cluster.call(0, "SET", "oracle-frozen", "t", "PX", "60000");
    AtomicBoolean renewing = new AtomicBoolean(true);
    AtomicLong renewals = new AtomicLong();
    Thread renewer = new Thread(() -> {
      try (RespClient node = new RespClient("127.0.0.1", ports().get(0), 10_000)) {
        for (long i = 1; renewing.get(); i++) {
          node.call("EVAL", "return redis.call('PEXPIRE', KEYS[1], ARGV[1])", "1", "oracle-frozen",
              Long.toString(60_000 + i * 1_000));
          renewals.incrementAndGet();
        }
      } catch (IOException stopped) {
        renewing.set(false);
      }
    }, "renewer");
    renewer.start();
    try (BeliefOracle oracle = new BeliefOracle(ports(), 2, Map.of("lease", "oracle-frozen"))) {
      Thread.sleep(60);
      // The renewer is running when the freeze begins (a starved one would make the test pass on any order).
      long seen = renewals.get();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (renewals.get() < seen + 10) {
        assertThat(System.nanoTime() - until).as("the renewer renews").isNegative();
        Thread.sleep(1);
      }
      try {
        oracle.freeze(cluster, 0);
        Thread.sleep(100);
        long lastReading = oracle.lastHoldUntil(0, "lease"); // before SIGCONT: the samplers read it again after
        cluster.resume(0);
        Object pttl = cluster.call(0, "PTTL", "oracle-frozen");
        long holdsUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos((Long) pttl);
        double apartMs = (holdsUntil - lastReading) / 1e6;
        assertThat(apartMs).as("ms between the last reading and the frozen node's hold").isBetween(-50.0, 50.0);
      } finally {
        BeliefOracle.thaw(cluster, 0);
      }
    } finally {
      renewing.set(false);
      renewer.join(15_000);
    }
  }

  @Test
  void aBeliefWithoutItsClockReadingIsADefect() {
    JsonObject event = new JsonObject();
    event.addProperty("event", "belief");
    event.addProperty("handle", "lease");
    event.addProperty("valid", true);
    event.addProperty("remaining_ms", 10);
    assertThat(BeliefOracle.Belief.of(event, System.nanoTime()).defect()).contains("without mono_ns");
    event.addProperty("mono_ns", Long.toString(System.nanoTime() + 1_000_000_000L));
    assertThat(BeliefOracle.Belief.of(event, System.nanoTime()).defect()).contains("not CLOCK_MONOTONIC");
  }

  private static final long MS = 1_000_000;

  /**
   * Go's keep-alive in a fresh-clone run: a renewal lands on the nodes just after their last
   * readings, the client reports the belief its answer gives, and releases before the samplers
   * come round again (one node's sampler did). The readings cannot tell the quorum's hold then:
   * not judged, rather than failed on readings the renewal came after.
   */
  @Test
  void aBeliefFromARenewalTheReleaseHidFromTheSamplersIsNotJudged() {
    BeliefOracle oracle = BeliefOracle.unsampled(5, 3, "lease");
    long t = 1_000_000 * MS;
    for (int n = 0; n < 5; n++) {
      oracle.recordReading(n, "lease", t, t + 750 * MS, true);
      oracle.recordReading(n, "lease", t + 6 * MS, t + 750 * MS, true);
    }
    oracle.recordReading(4, "lease", t + 12 * MS, t + 1_000 * MS, true);
    List<BeliefOracle.Belief> beliefs = List.of(
        new BeliefOracle.Belief(t + 3 * MS, "lease", false, true, 700, null),
        new BeliefOracle.Belief(t + 10 * MS, "lease", false, true, 927, null),
        new BeliefOracle.Belief(t + 13 * MS, "lease", true, false, 0, null));
    BeliefOracle.Verdict verdict = oracle.judge(beliefs, List.of("lease"), 1).get(0);
    assertThat(verdict.judged()).as("the belief with readings after it").isEqualTo(1);
    assertThat(verdict.unjudged()).as("the renewal's, whose nodes were not read again before the release").isEqualTo(1);
  }

  /** A node that cannot be read (frozen) keeps its last reading: the belief is judged on it, and fails. */
  @Test
  void aFrozenNodeKeepsItsLastReadingAndAnExcessOverItFails() {
    BeliefOracle oracle = BeliefOracle.unsampled(5, 3, "lease");
    long t = 1_000_000 * MS;
    for (int n = 0; n < 5; n++) {
      oracle.recordReading(n, "lease", t, t + 500 * MS, true);
    }
    for (int n = 3; n < 5; n++) {
      oracle.recordReading(n, "lease", t + 12 * MS, t + 1_000 * MS, true);
    }
    for (int n = 0; n < 3; n++) {
      oracle.recordReading(n, "lease", t + 15 * MS, null, false);
    }
    List<BeliefOracle.Belief> beliefs = List.of(
        new BeliefOracle.Belief(t + 10 * MS, "lease", false, true, 900, null),
        new BeliefOracle.Belief(t + 20 * MS, "lease", true, false, 0, null));
    assertThatThrownBy(() -> oracle.judge(beliefs, List.of("lease"), 1))
        .hasMessageContaining("longer than a quorum of nodes held its key");
  }
  /**
   * The fresh-clone run of c2de187 (replica-restart, four languages at once): a renewal lands on
   * every node just before the client's belief; two nodes' samplers read it at once, and three
   * nodes' samplers, descheduled between the node's answer and the clock reading, date their
   * readings of the node before the renewal 81 ms late, after the belief. Those are not readings
   * after the belief: the next ones, asked after it, show the renewal, and the belief passes.
   * Taken as readings after it, they would have failed an honest client by about 470 ms.
   */
  @Test
  void aReadingAskedBeforeTheBeliefButDatedAfterItIsNotAReadingAfterIt() {
    BeliefOracle oracle = BeliefOracle.unsampled(5, 3, "lease");
    BeliefOracle.Verdict verdict = oracle.judge(heldUpSamplers(oracle, true), List.of("lease"), 1).get(0);
    assertThat(verdict.judged()).isEqualTo(1);
    assertThat(verdict.largestExcessMs()).as("the belief against the nodes' renewed holds").isLessThan(0);
  }

  /** The same readings without the renewal on nodes 0, 2 and 3: the readings asked after the belief show the excess. */
  @Test
  void aBeliefTheReadingsAskedAfterItDoNotBearOutFails() {
    BeliefOracle oracle = BeliefOracle.unsampled(5, 3, "lease");
    List<BeliefOracle.Belief> beliefs = heldUpSamplers(oracle, false);
    assertThatThrownBy(() -> oracle.judge(beliefs, List.of("lease"), 1))
        .hasMessageContaining("longer than a quorum of nodes held its key")
        .hasMessageContaining("asked 25.0 ms later");
  }

  /**
   * That run's readings around a belief at t (2,752.2 ms left): every node read 85 ms before it;
   * nodes 1 and 4 read renewed 18 ms after it; nodes 0, 2 and 3 read before the renewal landed and
   * dated 81 ms late, then read again 25 ms after the belief, renewed or not as {@code renewedEverywhere}
   * says. Returns the belief and its belief-end.
   */
  private static List<BeliefOracle.Belief> heldUpSamplers(BeliefOracle oracle, boolean renewedEverywhere) {
    long t = 1_000_000 * MS;
    long renewedUntil = t + 2_954 * MS;
    long oldHold = t + 2_197 * MS;
    for (int n = 0; n < 5; n++) {
      oracle.recordReading(n, "lease", t - 90 * MS, t - 85 * MS, oldHold, true);
    }
    for (int n : new int[] {1, 4}) {
      oracle.recordReading(n, "lease", t + 17 * MS, t + 18 * MS, renewedUntil, true);
    }
    for (int n : new int[] {0, 2, 3}) {
      // Asked 62 ms before the belief, before the renewal landed; dated 19 ms after the belief.
      oracle.recordReading(n, "lease", t - 62 * MS, t + 19 * MS, oldHold + 81 * MS, true);
      oracle.recordReading(n, "lease", t + 25 * MS, t + 26 * MS, renewedEverywhere ? renewedUntil : oldHold, true);
    }
    return List.of(
        new BeliefOracle.Belief(t, "lease", false, true, 2_752.2, null),
        new BeliefOracle.Belief(t + 40 * MS, "lease", true, false, 0, null));
  }
  /**
   * The fresh-clone run of 17d5dda (rolling-restart-fast, Java): the runner read its client's
   * remaining time (2,475.6 ms), was held up 230 ms, then read the clock that dates the belief, so
   * the belief read as 2,705.6 ms from then, 85 ms past the nodes' hold. Counted from the clock
   * reading before it, it is 145 ms inside: not judged, rather than failed.
   */
  @Test
  void aBeliefThatFailsOnlyBecauseItsRunnerWasHeldUpIsNotJudged() {
    BeliefOracle.Verdict verdict = heldUpRunner(230).get(0);
    assertThat(verdict.judged()).isZero();
    assertThat(verdict.unjudged()).isEqualTo(1);
  }

  /** The same belief with the runner held up only 50 ms: it fails, by what it runs past the nodes counted from the earlier reading. */
  @Test
  void aHeldUpRunnerHidesNoExcessLongerThanItWasHeldUp() {
    assertThatThrownBy(() -> heldUpRunner(50)).hasMessageContaining("valid 35.6 ms longer");
  }

  /** Every node holds the key until t + 2,620 ms; the runner reports 2,705.6 ms left at t, read {@code heldUpMs} before. */
  private static List<BeliefOracle.Verdict> heldUpRunner(long heldUpMs) {
    BeliefOracle oracle = BeliefOracle.unsampled(5, 3, "lease");
    long t = 1_000_000 * MS;
    for (int n = 0; n < 5; n++) {
      oracle.recordReading(n, "lease", t - 7 * MS, t - 6 * MS, t + 2_620 * MS, true);
      oracle.recordReading(n, "lease", t + 16 * MS, t + 17 * MS, t + 2_620 * MS, true);
    }
    List<BeliefOracle.Belief> beliefs = List.of(
        new BeliefOracle.Belief(t, t - heldUpMs * MS, "lease", false, true, 2_705.6, null),
        new BeliefOracle.Belief(t + 40 * MS, "lease", true, false, 0, null));
    return oracle.judge(beliefs, List.of("lease"), 0);
  }
}
