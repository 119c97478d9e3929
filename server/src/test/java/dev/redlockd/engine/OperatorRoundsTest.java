package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.RedisNode;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The owner text stored with a lock, Describe and ForceRelease, against 5 real redis-server
 * processes (quorum 3), with nodes holding too little, answering nothing, and waiting callers.
 */
class OperatorRoundsTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static EngineHarness h;

  @BeforeAll
  static void start() {
    // A long retry delay: a waiter granted quickly can only have been woken by the force release.
    h = EngineHarness.start(5, EngineHarness.testConfig().withRetryDelay(Duration.ofSeconds(20)));
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  private static String lockKey(String resource) {
    return "redlock:{" + resource + "}:lock";
  }

  /** The owner text kept in the lock's value after its first line; null without a lock. */
  private static String ownerOn(int node, String resource) {
    String value = h.cluster.get(node, lockKey(resource));
    if (value == null) {
      return null;
    }
    int newline = value.indexOf('\n');
    return newline < 0 ? "" : value.substring(newline + 1);
  }

  private static String fenceKey(String resource) {
    return "redlock:{" + resource + "}:fence";
  }

  private static long pttl(int node, String key) {
    return (Long) h.cluster.call(node, "PTTL", key);
  }

  private static List<String> allNames() {
    return h.nodes.stream().map(RedisNode::name).toList();
  }

  private static Grant acquire(String resource, String owner) {
    return h.engine.acquire(resource, TTL, Duration.ZERO, "", owner).join();
  }

  @Test
  void ownerIsStoredInTheLockOnEveryNodeAndGoesWithARelease() {
    Grant lease = acquire("owner-stored", "billing-7f9c pid 4711 é\nsecond line");
    for (int node = 0; node < 5; node++) {
      assertThat(ownerOn(node, "owner-stored")).isEqualTo("billing-7f9c pid 4711 é\nsecond line");
    }
    assertThat(h.engine.describe("owner-stored").join().owner()).isEqualTo("billing-7f9c pid 4711 é\nsecond line");
    assertThat(h.engine.release("owner-stored", lease.token()).join()).isTrue();
    for (int node = 0; node < 5; node++) {
      assertThat(h.cluster.call(node, "EXISTS", lockKey("owner-stored"))).as("node %d", node).isEqualTo(0L);
    }
  }

  @Test
  void noOwnerStoresNoOwnerText() {
    Grant lease = acquire("owner-none", "");
    for (int node = 0; node < 5; node++) {
      assertThat(ownerOn(node, "owner-none")).isEmpty();
    }
    assertThat(h.engine.describe("owner-none").join().owner()).isEmpty();
    h.engine.release("owner-none", lease.token()).join();
  }

  @Test
  void extensionsKeepTheOwnerTextAlsoInAManyLeaseRenewal() {
    List<Redlock.Extension> extensions = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      String resource = "owner-extend-" + i;
      Grant lease = h.engine.acquire(resource, Duration.ofSeconds(1), Duration.ZERO, "", "holder " + i).join();
      extensions.add(new Redlock.Extension(resource, lease.token(), Duration.ofSeconds(30)));
    }
    for (CompletableFuture<Grant> renewed : h.engine.locks().extendAll(extensions)) {
      renewed.join();
    }
    for (int i = 0; i < 5; i++) {
      String resource = "owner-extend-" + i;
      for (int node = 0; node < 5; node++) {
        assertThat(pttl(node, lockKey(resource))).as("%s on node %d", resource, node).isGreaterThan(29_000L);
        assertThat(ownerOn(node, resource)).isEqualTo("holder " + i);
      }
      assertThat(h.engine.describe(resource).join().owner()).isEqualTo("holder " + i);
    }
    for (Redlock.Extension e : extensions) {
      h.engine.release(e.resource(), e.token()).join();
    }
  }

  @Test
  void reacquireWithTheSameTokenRefreshesTheOwner() {
    String token = LockToken.generate(RANDOM);
    Grant first = h.engine.acquire("owner-refresh", Duration.ofSeconds(2), Duration.ZERO, token, "first").join();
    Grant again = h.engine.acquire("owner-refresh", TTL, Duration.ZERO, token, "second").join();
    assertThat(again.fencingToken()).isEqualTo(first.fencingToken());
    LockDescription described = h.engine.describe("owner-refresh").join();
    assertThat(described.owner()).isEqualTo("second");
    assertThat(described.remainingTtl()).isGreaterThan(Duration.ofSeconds(9));
    assertThat(pttl(0, lockKey("owner-refresh"))).isGreaterThan(9_000L);

    h.engine.acquire("owner-refresh", TTL, Duration.ZERO, token, "").join();
    assertThat(h.engine.describe("owner-refresh").join().owner()).isEmpty();
    h.engine.release("owner-refresh", token).join();
  }

  @Test
  void describeOfAHeldLockNamesOwnerFenceNodesAndRemainingTtl() {
    Grant lease = acquire("describe-held", "ops-test pid 1");
    LockDescription d = h.engine.describe("describe-held").join();
    assertThat(d.held()).isTrue();
    assertThat(d.owner()).isEqualTo("ops-test pid 1");
    assertThat(d.fencingToken()).isEqualTo(lease.fencingToken());
    assertThat(d.nodes()).containsExactlyElementsOf(allNames());
    assertThat(d.remainingTtl()).isGreaterThan(Duration.ofSeconds(9)).isLessThanOrEqualTo(TTL);
    assertThat(d.toString()).doesNotContain(lease.token());
    h.engine.release("describe-held", lease.token()).join();
  }

  @Test
  void remainingTtlIsHowLongAQuorumStillHoldsIt() {
    Grant lease = acquire("describe-ttl", "x");
    long[] left = {9_000, 3_000, 8_000, 2_000, 7_000};
    for (int node = 0; node < 5; node++) {
      h.cluster.call(node, "PEXPIRE", lockKey("describe-ttl"), Long.toString(left[node]));
    }
    // Sorted: 9, 8, 7, 3, 2 s. After 7 s only two nodes would still hold it.
    Duration remaining = h.engine.describe("describe-ttl").join().remainingTtl();
    assertThat(remaining).isBetween(Duration.ofMillis(6_500), Duration.ofMillis(7_000));
    h.engine.release("describe-ttl", lease.token()).join();
  }

  @Test
  void describeOfAFreeOrReleasedResourceIsNotHeldAndEmpty() {
    assertThat(h.engine.describe("describe-never").join()).isEqualTo(LockDescription.NOT_HELD);
    Grant lease = acquire("describe-released", "someone");
    h.engine.release("describe-released", lease.token()).join();
    LockDescription d = h.engine.describe("describe-released").join();
    assertThat(d).isEqualTo(LockDescription.NOT_HELD);
    assertThat(d.owner()).isEmpty();
    assertThat(d.nodes()).isEmpty();
    assertThat(d.fencingToken()).isZero();
  }

  @Test
  void aMinorityLeftOverIsNotHeld() {
    // Every node holds it before single nodes lose it (a grant comes once a quorum took it).
    Grant lease = h.onEveryNode(acquire("describe-minority", "leftover"));
    for (int node = 2; node < 5; node++) {
      h.cluster.call(node, "DEL", lockKey("describe-minority"));
    }
    assertThat(h.engine.describe("describe-minority").join()).isEqualTo(LockDescription.NOT_HELD);
    h.engine.release("describe-minority", lease.token()).join();
  }

  @Test
  void twoLeasesSplittingTheNodesAreNotHeld() {
    // As after a fault: nodes 0 and 1 hold one lease, 2 and 3 another, node 4 none.
    for (int node = 0; node < 4; node++) {
      String token = node < 2 ? "AAAAAAAAAAAAAAAAAAAAAAAA" : "BBBBBBBBBBBBBBBBBBBBBBBB";
      h.cluster.call(node, "SET", lockKey("describe-split"), token, "PX", "10000");
    }
    assertThat(h.engine.describe("describe-split").join()).isEqualTo(LockDescription.NOT_HELD);
    h.cluster.pause(4);
    try {
      // Node 4 might hold either: then one of them would have a quorum.
      assertThatThrownBy(() -> h.engine.describe("describe-split").join())
          .hasCauseInstanceOf(QuorumUnavailableException.class);
    } finally {
      h.cluster.resume(4);
    }
    for (int node = 0; node < 4; node++) {
      h.cluster.call(node, "DEL", lockKey("describe-split"));
    }
  }

  @Test
  void silentNodesAreLeftOutOrMakeTheAnswerUnavailable() {
    // Every node holds it before single nodes lose it (a grant comes once a quorum took it).
    Grant lease = h.onEveryNode(acquire("describe-silent", "quiet"));
    h.cluster.pause(4);
    try {
      LockDescription d = h.engine.describe("describe-silent").join();
      assertThat(d.held()).isTrue();
      assertThat(d.nodes()).containsExactlyElementsOf(allNames().subList(0, 4));
    } finally {
      h.cluster.resume(4);
    }
    for (int node = 3; node < 5; node++) {
      h.cluster.call(node, "DEL", lockKey("describe-silent"));
    }
    h.cluster.pause(0);
    try {
      // Held on 1 and 2 as far as anyone can see; node 0 would make a quorum.
      assertThatThrownBy(() -> h.engine.describe("describe-silent").join())
          .hasCauseInstanceOf(QuorumUnavailableException.class)
          .hasMessageContaining("4 of 5 Redis nodes answered");
    } finally {
      h.cluster.resume(0);
    }
    h.engine.release("describe-silent", lease.token()).join();
  }

  @Test
  void forceReleaseDeletesWhateverTheTokenAndTheNextFenceIsHigher() {
    Grant lease = acquire("force", "gone-holder");
    List<String> fencesBefore = new ArrayList<>();
    for (int node = 0; node < 5; node++) {
      fencesBefore.add(h.cluster.get(node, fenceKey("force")));
    }

    assertThat(h.engine.forceRelease("force").join()).isTrue();

    for (int node = 0; node < 5; node++) {
      assertThat(h.cluster.call(node, "EXISTS", lockKey("force"))).as("node %d", node)
          .isEqualTo(0L);
      assertThat(h.cluster.get(node, fenceKey("force"))).as("fence on node %d", node)
          .isEqualTo(fencesBefore.get(node));
    }
    assertThat(h.engine.describe("force").join()).isEqualTo(LockDescription.NOT_HELD);
    // The former holder finds out at its next renewal.
    assertThatThrownBy(() -> h.engine.extend("force", lease.token(), TTL).join())
        .hasCauseInstanceOf(LeaseNotHeldException.class);
    assertThat(h.engine.forceRelease("force").join()).as("nothing left to delete").isFalse();

    Grant next = acquire("force", "new-holder");
    assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
    h.engine.release("force", next.token()).join();
  }

  @Test
  void forceReleaseDeletesALeftOverOnOneNode() {
    h.cluster.call(3, "SET", lockKey("force-leftover"), "CCCCCCCCCCCCCCCCCCCCCCCC", "PX", "10000");
    assertThat(h.engine.forceRelease("force-leftover").join()).isTrue();
    assertThat(h.cluster.call(3, "EXISTS", lockKey("force-leftover"))).isEqualTo(0L);
  }

  @Test
  void forceReleaseNeedsAQuorumToAnswer() {
    Grant lease = acquire("force-silent", "x");
    h.cluster.pause(3, 4);
    try {
      assertThat(h.engine.forceRelease("force-silent").join()).isTrue();
      Grant next = acquire("force-silent", "y"); // the three that answered grant it again
      assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
      h.engine.release("force-silent", next.token()).join();
    } finally {
      h.cluster.resume(3, 4);
    }
    acquire("force-silent", "z");
    h.cluster.pause(2, 3, 4);
    try {
      // Three silent nodes may still hold it: the lock may well be held after the call.
      assertThatThrownBy(() -> h.engine.forceRelease("force-silent").join())
          .hasCauseInstanceOf(QuorumUnavailableException.class)
          .hasMessageContaining("2 of 5 Redis nodes answered");
      // The nodes that answered did delete it.
      assertThat(h.cluster.call(0, "EXISTS", lockKey("force-silent"))).isEqualTo(0L);
      assertThat(h.cluster.call(1, "EXISTS", lockKey("force-silent"))).isEqualTo(0L);
    } finally {
      h.cluster.resume(2, 3, 4); // they run the queued deletion as they wake up
    }
    assertThat(h.engine.forceRelease("force-silent").join()).isIn(true, false);
    assertThat(h.engine.describe("force-silent").join()).isEqualTo(LockDescription.NOT_HELD);
  }

  @Test
  void forceReleaseWakesAWaiterAtOnce() throws Exception {
    Grant holder = acquire("force-wake", "stuck");
    CompletableFuture<Grant> waiter = h.engine.acquire("force-wake", TTL, Duration.ofSeconds(30), "", "next");
    Thread.sleep(100);
    assertThat(waiter).isNotDone();
    long released = System.nanoTime();
    h.engine.forceRelease("force-wake").join();
    Grant next = waiter.get(5, TimeUnit.SECONDS);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released)).isLessThan(5000);
    assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
    assertThat(h.engine.describe("force-wake").join().owner()).isEqualTo("next");
    h.engine.release("force-wake", next.token()).join();
  }

  @Test
  void badResourcesAreRefusedBeforeAnyNodeIsAsked() {
    for (String bad : new String[] {"", "x".repeat(513)}) {
      assertThatThrownBy(() -> h.engine.describe(bad).join())
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(InvalidRequestException.class);
      assertThatThrownBy(() -> h.engine.forceRelease(bad).join())
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(InvalidRequestException.class);
    }
    assertThatThrownBy(() -> h.engine.acquire("owner-long", TTL, Duration.ZERO, "", "ö".repeat(129)).join())
        .hasCauseInstanceOf(InvalidRequestException.class);
    assertThat(h.cluster.call(0, "EXISTS", lockKey("owner-long"))).isEqualTo(0L);
  }
}
