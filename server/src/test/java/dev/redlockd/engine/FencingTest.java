package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Fencing tokens against real redis-server processes, with nodes missing grants. */
class FencingTest {
  private static final Duration TTL = Duration.ofSeconds(5);
  private static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.start(5, EngineHarness.testConfig());
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  private static Grant acquire(String resource) {
    return h.engine.acquire(resource, TTL, Duration.ZERO, "").join();
  }

  private static void release(Grant lease) {
    assertThat(h.engine.release(lease.resource(), lease.token()).join()).isTrue();
  }

  /**
   * Makes nodes refuse the resource, as a node still holding a stale key would: they answer
   * but take no part in the grant, so their counters fall behind. (A paused node would not do:
   * it runs the queued scripts when it wakes up.)
   */
  private static void refuseOn(String resource, int... nodes) {
    for (int i : nodes) {
      h.cluster.call(i, "SET", "redlock:{" + resource + "}:lock", "someone-else", "PX", "60000");
    }
  }

  private static void acceptOn(String resource, int... nodes) {
    for (int i : nodes) {
      h.cluster.call(i, "DEL", "redlock:{" + resource + "}:lock");
    }
  }

  private static long counter(int node, String resource) {
    String value = h.cluster.get(node, "redlock:{" + resource + "}:fence");
    return value == null ? 0 : Long.parseLong(value);
  }

  @Test
  void nodesThatMissedGrantsNeverLowerTheToken() {
    String resource = "fencing-lagging";
    List<Long> fences = new ArrayList<>();
    // Nodes 3 and 4 miss five grants: their counters fall behind nodes 0..2.
    refuseOn(resource, 3, 4);
    for (int i = 0; i < 5; i++) {
      Grant lease = acquire(resource);
      fences.add(lease.fencingToken());
      release(lease);
    }
    acceptOn(resource, 3, 4);
    assertThat(counter(3, resource)).isLessThan(counter(2, resource) - 4);

    // A quorum of {2, 3, 4}: only node 2 knows the latest fence.
    refuseOn(resource, 0, 1);
    Grant second = acquire(resource);
    fences.add(second.fencingToken());
    release(second);
    acceptOn(resource, 0, 1);
    // The lagging nodes were raised to that fence before the grant...
    assertThat(counter(3, resource)).isEqualTo(second.fencingToken());
    assertThat(counter(4, resource)).isEqualTo(second.fencingToken());

    // ...so a quorum of {0, 1, 3}, without node 2, still goes above it. Node 0 and 1 alone
    // stand at the grant before; a plain max over this quorum would repeat a fence.
    refuseOn(resource, 2, 4);
    Grant third = acquire(resource);
    fences.add(third.fencingToken());
    release(third);
    acceptOn(resource, 2, 4);

    assertThat(fences).isSorted().doesNotHaveDuplicates();
  }

  @Test
  void tokensRiseAcrossReleaseExpiryAndReacquire() throws InterruptedException {
    String resource = "fencing-lifecycle";
    Grant first = acquire(resource);
    release(first);
    Grant second = acquire(resource);
    Grant expiring = second;
    release(expiring);
    Grant third = h.engine.acquire(resource, Duration.ofMillis(50), Duration.ZERO, "").join();
    Thread.sleep(120); // let it expire on every node
    Grant fourth = acquire(resource);
    assertThat(List.of(first.fencingToken(), second.fencingToken(), third.fencingToken(), fourth.fencingToken()))
        .isSorted()
        .doesNotHaveDuplicates();
    release(fourth);
  }

  @Test
  void aResourceLeavesNoKeyBehindAndItsFencesStillRiseAfterwards() throws InterruptedException {
    String resource = "fencing-forgotten";
    Grant first = h.engine.acquire(resource, Duration.ofMillis(200), Duration.ZERO, "").join();
    release(first);
    // The counter outlives the lock by at most the ttl: then the resource has no key left.
    waitUntilNoKeyOf(resource);
    Grant second = acquire(resource);
    assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
    release(second);
  }

  private static void waitUntilNoKeyOf(String resource) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    for (int node = 0; node < 5; node++) {
      while (!((java.util.List<?>) h.cluster.call(node, "KEYS", "redlock:{" + resource + "}*")).isEmpty()) {
        assertThat(System.nanoTime()).as("keys of %s gone from node %d", resource, node).isLessThan(deadline);
        Thread.sleep(10);
      }
    }
  }

  @Test
  void aLeaseAnOlderServerWroteIsNeitherRefreshedNorExtendedNorTakenOver() {
    String resource = "fencing-older-shape";
    String token = LockToken.generate(new java.security.SecureRandom());
    for (int node = 0; node < 5; node++) {
      // An older server's value: the token and a round id whose name starts with digits.
      h.cluster.call(node, "SET", "redlock:{" + resource + "}:lock", token + " 3k9.1", "PX", "10000");
    }
    assertThatThrownBy(() -> h.engine.acquire(resource, TTL, Duration.ZERO, token).join())
        .hasCauseInstanceOf(LockHeldException.class);
    assertThatThrownBy(() -> h.engine.extend(resource, token, TTL).join())
        .hasCauseInstanceOf(LeaseNotHeldException.class);
    assertThatThrownBy(() -> acquire(resource)).hasCauseInstanceOf(LockHeldException.class);
    assertThat(h.engine.release(resource, token).join()).isTrue();
  }

  @Test
  void reacquireWithTheSameTokenRefreshesAndKeepsTheFence() {
    String resource = "fencing-idempotent";
    String token = LockToken.generate(new java.security.SecureRandom());
    Grant first = h.engine.acquire(resource, TTL, Duration.ZERO, token).join();
    Grant again = h.engine.acquire(resource, TTL, Duration.ZERO, token).join();
    assertThat(again.fencingToken()).isEqualTo(first.fencingToken());
    assertThat(again.token()).isEqualTo(token);
    assertThatThrownBy(() -> acquire(resource))
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(LockHeldException.class);
    release(again);
  }

  @Test
  void fencesStartAboveTheWallClockInMicroseconds() {
    long before = java.util.concurrent.TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
    Grant lease = acquire("fencing-floor-" + before);
    // The cluster was seeded when the harness started, i.e. shortly before this test.
    assertThat(lease.fencingToken()).isGreaterThan(before - 600_000_000L);
    release(lease);
  }

  @Test
  void extendNeverReportsAFenceThatALaterGrantCouldGoBelow() {
    Grant lease = acquire("fence-late-node");
    // Node 4 took the lock in the granting round but answered too late to be counted, with a
    // fence far ahead of the others (failed rounds elsewhere had pushed its counter up).
    long ahead = lease.fencingToken() + 100;
    h.cluster.call(4, "SET", "redlock:{fence-late-node}:lock", lease.token() + " " + ahead + " late-round", "KEEPTTL");

    Grant extended = h.engine.extend("fence-late-node", lease.token(), TTL).join();
    // A quorum holds the grant's fence: the renewal reports it, not the late node's (a client
    // would otherwise see its fencing token change with no new grant).
    assertThat(extended.fencingToken()).isEqualTo(lease.fencingToken());
    assertThat(h.engine.describe("fence-late-node").join().fencingToken()).as("what Describe reports")
        .isEqualTo(lease.fencingToken());
    release(extended);

    // The next grant happens without node 4: it must still exceed whatever Extend reported.
    h.cluster.pause(4);
    try {
      Grant next = acquire("fence-late-node");
      assertThat(next.fencingToken()).isGreaterThan(extended.fencingToken());
      release(next);
    } finally {
      h.cluster.resume(4);
    }
  }
}
