package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.node.RedisNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PreferenceOrderTest {
  private static final int KEYS = 50_000;

  private static List<RedisNode> nodes(int n) {
    List<RedisNode> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      nodes.add(ScriptedNode.silent("10.0.0." + (i + 1) + ":6379"));
    }
    return nodes;
  }

  @Test
  void theOrderDependsOnTheNamesOnlyNotOnTheListsOrderOrTheInstance() {
    List<RedisNode> nodes = nodes(5);
    List<RedisNode> reversed = new ArrayList<>(nodes);
    java.util.Collections.reverse(reversed);
    PreferenceOrder one = new PreferenceOrder(nodes);
    PreferenceOrder other = new PreferenceOrder(reversed);
    for (int k = 0; k < 1000; k++) {
      String key = "redlock:lock:res" + k;
      assertThat(names(one.of(key))).isEqualTo(names(other.of(key))).isEqualTo(names(one.of(key)));
    }
    // Pinned: an order that changed between versions would send a mixed-version cluster's
    // rounds to different nodes (safe, but no longer thrifty).
    assertThat(names(one.of("redlock:lock:orders"))).containsExactly("10.0.0.5:6379", "10.0.0.3:6379", "10.0.0.2:6379",
        "10.0.0.4:6379", "10.0.0.1:6379");
  }

  @Test
  void eachNodeComesFirstAndSitsInTheFirstQuorumForAnEqualShareOfTheKeys() {
    for (int n : new int[] {3, 5, 7}) {
      List<RedisNode> nodes = nodes(n);
      PreferenceOrder order = new PreferenceOrder(nodes);
      int quorum = Tally.quorumOf(n);
      int[] first = new int[n];
      int[] inQuorum = new int[n];
      for (int k = 0; k < KEYS; k++) {
        int[] ranks = order.ranks("redlock:lock:res" + k);
        first[ranks[0]]++;
        for (int r = 0; r < quorum; r++) {
          inQuorum[ranks[r]]++;
        }
      }
      // Each count is binomial(KEYS, p) if the weights are independent and uniform; 5 standard
      // deviations leave a fair hash a chance of about 1 in 1.7 million per count to fail.
      assertWithin(first, KEYS, 1.0 / n);
      assertWithin(inQuorum, KEYS, (double) quorum / n);
    }
  }

  @Test
  void removingANodeLeavesTheOthersInTheirOrder() {
    List<RedisNode> nodes = nodes(5);
    PreferenceOrder all = new PreferenceOrder(nodes);
    for (int gone = 0; gone < nodes.size(); gone++) {
      List<RedisNode> rest = new ArrayList<>(nodes);
      RedisNode removed = rest.remove(gone);
      PreferenceOrder fewer = new PreferenceOrder(rest);
      for (int k = 0; k < 2000; k++) {
        String key = "redlock:lock:res" + k;
        List<RedisNode> expected = new ArrayList<>(all.of(key));
        expected.remove(removed);
        assertThat(names(fewer.of(key))).isEqualTo(names(expected));
      }
    }
  }

  private static void assertWithin(int[] counts, int trials, double p) {
    double mean = trials * p;
    double bound = 5 * Math.sqrt(trials * p * (1 - p));
    for (int count : counts) {
      assertThat((double) count).isBetween(mean - bound, mean + bound);
    }
  }

  private static List<String> names(List<RedisNode> nodes) {
    return nodes.stream().map(RedisNode::name).toList();
  }
}
