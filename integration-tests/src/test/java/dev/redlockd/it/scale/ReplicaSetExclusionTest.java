package dev.redlockd.it.scale;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.FrozenNodeContention;
import dev.redlockd.it.support.LiveServer;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Seven real Redis nodes, each resource on five of them (--nodes-per-resource 5), through the
 * real server over real sockets: contending clients never overlap and their fences rise while
 * one node is SIGSTOPped mid-run, and each resource's keys sit on at most five nodes (its set),
 * the resources spread over all seven.
 */
class ReplicaSetExclusionTest {
  private static final int NODES = 7;
  private static final int PER_RESOURCE = 5;
  private static final int CLIENTS = 12;
  private static final int GRANTS_PER_CLIENT = 10;
  private static final String[] RESOURCES = {"rs-a", "rs-b", "rs-c", "rs-d", "rs-e", "rs-f"};

  @Test
  void contendingClientsNeverOverlapWhileANodeIsFrozenAndEachResourceStaysOnItsSet() throws Exception {
    try (LiveServer h = new LiveServer(NODES, "--nodes-per-resource", Integer.toString(PER_RESOURCE))) {
      FrozenNodeContention run = new FrozenNodeContention(h, Duration.ofSeconds(2), RESOURCES);
      run.run(CLIENTS, GRANTS_PER_CLIENT, 2);
      // Each resource's fence counter lives a ttl past its last take, on the nodes that took it.
      Map<String, Set<Integer>> holders = new TreeMap<>();
      Set<Integer> used = new HashSet<>();
      for (String r : RESOURCES) {
        Set<Integer> on = new HashSet<>();
        for (int node = 0; node < NODES; node++) {
          Object keys = h.cluster().call(node, "KEYS", "*{" + r + "}*");
          if (keys instanceof List<?> list && !list.isEmpty()) {
            on.add(node);
          }
        }
        holders.put(r, on);
        used.addAll(on);
      }
      System.out.printf("replica sets (%d of %d): %d sections, %d renewed (%d with node 2 frozen), %d renewals "
          + "refused, %d acquires again after UNAVAILABLE; nodes holding each resource's keys: %s%n", PER_RESOURCE,
          NODES, run.checker.sections.get(), run.renewed.get(), run.renewedWhileFrozen.get(),
          run.renewalsRefused.get(), run.acquiresAgain.get(), holders);
      assertThat(run.frozen).isTrue();
      assertThat(run.checker.sections.get()).isEqualTo(CLIENTS * GRANTS_PER_CLIENT);
      assertThat(run.checker.overlaps.get()).isZero();
      assertThat(run.checker.fenceViolations.get()).isZero();
      assertThat(run.renewedWhileFrozen.get()).as("renewals with node 2 frozen").isPositive();
      for (Map.Entry<String, Set<Integer>> e : holders.entrySet()) {
        // A majority of the set took each grant; nothing went outside the set.
        assertThat(e.getValue()).as(e.getKey()).hasSizeBetween(PER_RESOURCE / 2 + 1, PER_RESOURCE);
      }
      assertThat(used).as("the resources spread over the nodes").hasSizeGreaterThan(PER_RESOURCE);
    }
  }
}
