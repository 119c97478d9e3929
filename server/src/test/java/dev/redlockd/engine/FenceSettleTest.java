package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node that takes a grant after the quorum that decided it, with a fence drawn from a higher
 * floor of its own, is settled to the grant's fence (settle.lua), so that renewals keep
 * reporting the fence the holder was granted. Its own cluster: the test pushes one node's
 * floor far ahead, which other fencing tests must not see.
 */
class FenceSettleTest {
  private static final Duration TTL = Duration.ofSeconds(5);
  private static EngineHarness h;

  @BeforeAll
  static void start() {
    // A node timeout well past CLIENT PAUSE's granularity (Redis ends a pause on its 100 ms
    // cron): the paused node answers late, not never.
    h = EngineHarness.start(5, EngineHarness.testConfig(), Duration.ofSeconds(1));
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

  @Test
  void aNodeThatTookTheGrantAfterItsQuorumWithAHigherFenceIsSettledToTheGrants() throws Exception {
    String resource = "fence-settle";
    // Node 4's floor runs far ahead of the others' (it drew fences the others never saw), and it
    // answers this grant late: after the quorum decided, within the node timeout.
    String floor = (String) h.cluster.call(0, "GET", "redlock:node:fence-max");
    long ahead = Long.parseLong(floor == null ? "0" : floor) + 1_000_000;
    h.cluster.call(4, "SET", "redlock:node:fence-max", Long.toString(ahead));
    h.cluster.call(4, "CLIENT", "PAUSE", "30");
    Grant lease = acquire(resource);
    assertThat(lease.fencingToken()).isLessThan(ahead);
    String lockKey = "redlock:{" + resource + "}:lock";
    long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(2);
    String stored = h.cluster.get(4, lockKey);
    while (System.nanoTime() < until && (stored == null || !stored.split(" ")[1].equals(Long.toString(lease.fencingToken())))) {
      Thread.sleep(10);
      stored = h.cluster.get(4, lockKey);
    }
    assertThat(stored).as("node 4 took the lock late").isNotNull();
    assertThat(Long.parseLong(stored.split(" ")[1])).as("node 4's stored fence, settled to the grant's")
        .isEqualTo(lease.fencingToken());
    assertThat(Long.parseLong(h.cluster.get(4, "redlock:{" + resource + "}:fence"))).as("its counter stays ahead")
        .isGreaterThan(lease.fencingToken());
    // A renewal that hears every node, node 4 included, reports the grant's fence.
    Grant extended = h.engine.extend(resource, lease.token(), TTL).join();
    assertThat(extended.fencingToken()).isEqualTo(lease.fencingToken());
    release(extended);
    Grant next = acquire(resource);
    assertThat(next.fencingToken()).as("later grants still draw above node 4's floor").isGreaterThan(lease.fencingToken());
    release(next);
  }
}
