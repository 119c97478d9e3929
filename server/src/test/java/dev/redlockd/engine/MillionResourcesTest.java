package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A service that locks per order or per job id locks each resource once: after hundreds of
 * thousands of them, locked and released through the engine on 3 real redis-server processes,
 * the nodes hold what they held before (their node-wide keys) and no more memory. The suite
 * runs 100,000 (a key per resource left behind would be ~10 MB, far past the 1 MiB allowed; it
 * ran 300,000 until the suite's time on 2 cores asked for less);
 * {@code -Dmillion.resources=1000000} runs the full million.
 */
@Tag("cpu-bound") // run alone, after the other classes (server/pom.xml)
class MillionResourcesTest {
  private static final int RESOURCES = Integer.getInteger("million.resources", 100_000);
  private static final int IN_FLIGHT = 256;
  /** Short, but long enough for every grant under this load: a counter key outlives its take by this. */
  private static final Duration TTL = Duration.ofSeconds(1);

  @Test
  void lockingAMillionResourcesOnceLeavesNoKeyAndNoMemoryBehind() throws Exception {
    try (EngineHarness h = EngineHarness.start(3, EngineHarness.testConfig())) {
      // Warm up the scripts and node keys, then measure from there.
      cycle(h, "warm-up-", 1_000);
      waitForOnlyNodeKeys(h);
      List<Long> keysBefore = new ArrayList<>();
      List<Long> memoryBefore = new ArrayList<>();
      for (int node = 0; node < 3; node++) {
        keysBefore.add((Long) h.cluster.call(node, "DBSIZE"));
        memoryBefore.add(usedMemory(h, node));
      }

      long started = System.nanoTime();
      long granted = cycle(h, "order-", RESOURCES);
      long millis = (System.nanoTime() - started) / 1_000_000;
      System.out.printf("million resources: %,d locked and released in %,d ms%n", granted, millis);
      // The claim is about what the nodes keep, whether a round was granted or timed out (on a
      // loaded machine many do: 96 % granted was seen with other builds beside it, and a timed-out
      // round's clean-up must leave nothing either). The bound asks only for grants enough that a
      // key left behind by each would be far past the memory allowed below: a quarter is ~2.5 MB.
      assertThat(granted).isGreaterThan(RESOURCES / 4);

      waitForOnlyNodeKeys(h);
      for (int node = 0; node < 3; node++) {
        long memory = usedMemory(h, node);
        System.out.printf("node %d: %d keys (before: %d), used_memory %,d bytes (before: %,d)%n", node,
            (Long) h.cluster.call(node, "DBSIZE"), keysBefore.get(node), memory, memoryBefore.get(node));
        assertThat((Long) h.cluster.call(node, "DBSIZE")).as("keys on node %d", node).isEqualTo(keysBefore.get(node));
        // A key per resource left behind would be ~30 MB here; allocator noise is well under 1 MiB.
        assertThat(memory).as("used_memory of node %d", node).isLessThan(memoryBefore.get(node) + (1 << 20));
      }
    }
  }

  /** Locks and releases {@code count} distinct resources, {@link #IN_FLIGHT} at a time; returns the grants. */
  private static long cycle(EngineHarness h, String prefix, int count) throws InterruptedException {
    Semaphore slots = new Semaphore(IN_FLIGHT);
    AtomicLong granted = new AtomicLong();
    for (int i = 0; i < count; i++) {
      slots.acquire();
      String resource = prefix + i;
      h.engine.acquire(resource, TTL, Duration.ZERO, "")
          .thenCompose(lease -> {
            granted.incrementAndGet();
            return h.engine.release(resource, lease.token());
          })
          .whenComplete((released, failure) -> slots.release());
    }
    slots.acquire(IN_FLIGHT);
    return granted.get();
  }

  /**
   * Counters run out a ttl after their take; Redis's active expiry then reclaims them (DBSIZE
   * and used_memory count an expired key until then, KEYS does not).
   */
  private static void waitForOnlyNodeKeys(EngineHarness h) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    for (int node = 0; node < 3; node++) {
      while (true) {
        long nodeKeys = ((List<?>) h.cluster.call(node, "KEYS", "redlock:node:*")).size();
        long all = (Long) h.cluster.call(node, "DBSIZE");
        if (all == nodeKeys) {
          break;
        }
        assertThat(System.nanoTime()).as("node %d still holds %d keys besides its %d node-wide ones, e.g. %s",
            node, all - nodeKeys, nodeKeys, h.cluster.call(node, "RANDOMKEY")).isLessThan(deadline);
        Thread.sleep(200);
      }
    }
  }

  private static long usedMemory(EngineHarness h, int node) {
    String info = (String) h.cluster.call(node, "INFO", "memory");
    for (String line : info.split("\r\n")) {
      if (line.startsWith("used_memory:")) {
        return Long.parseLong(line.substring("used_memory:".length()));
      }
    }
    throw new IllegalStateException("no used_memory in INFO memory");
  }
}
