package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.RedisNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PlacementsTest {

  private static List<RedisNode> nodes(int n) {
    List<RedisNode> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      nodes.add(ScriptedNode.silent("10.0.0." + (i + 1) + ":6379"));
    }
    return nodes;
  }

  private static List<String> ids(List<RedisNode> nodes) {
    return nodes.stream().map(n -> "id-" + n.name()).toList();
  }

  private static List<String> names(List<RedisNode> nodes) {
    return nodes.stream().map(RedisNode::name).toList();
  }

  /** The last byte of each node's address: what the two lists of {@link #theIdsDecideTheSetNotTheAddresses} share. */
  private static List<String> hosts(List<RedisNode> nodes) {
    return nodes.stream().map(n -> n.name().replaceAll(".*\\.(\\d+):.*", "$1")).toList();
  }

  @Test
  void withEveryNodePerKeyEveryKeyLivesOnTheWholeListInItsOrder() {
    List<RedisNode> nodes = nodes(5);
    Placements placements = new Placements(nodes, ids(nodes), 5);
    PreferenceOrder order = new PreferenceOrder(nodes, ids(nodes));
    for (int k = 0; k < 200; k++) {
      Placement p = placements.of("redlock:lock:res" + k);
      assertThat(p.nodes()).isEqualTo(nodes);
      assertThat(p.quorum().smallest()).isEqualTo(3);
      assertThat(p.ranked()).containsExactly(order.ranks("redlock:lock:res" + k));
    }
  }

  @Test
  void aKeyLivesOnTheFirstNodesOfItsOrderWhateverOrderTheListIsIn() {
    List<RedisNode> nodes = nodes(9);
    List<String> ids = ids(nodes);
    List<RedisNode> shuffled = new ArrayList<>(nodes);
    Collections.shuffle(shuffled, new Random(1));
    List<String> shuffledIds = shuffled.stream().map(n -> ids.get(nodes.indexOf(n))).toList();
    Placements one = new Placements(nodes, ids, 5);
    Placements other = new Placements(shuffled, shuffledIds, 5);
    PreferenceOrder order = new PreferenceOrder(nodes, ids);
    Map<String, Integer> sets = new HashMap<>();
    int keys = 9_000;
    for (int k = 0; k < keys; k++) {
      String key = "redlock:lock:res" + k;
      Placement p = one.of(key);
      assertThat(p.nodes()).hasSize(5);
      assertThat(p.quorum().smallest()).isEqualTo(3);
      assertThat(p.nodes()).containsExactlyInAnyOrderElementsOf(order.of(key).subList(0, 5));
      assertThat(other.of(key).nodes()).containsExactlyInAnyOrderElementsOf(p.nodes());
      // The thrifty order within the set is the key's own order over all nodes, outside nodes left out.
      List<RedisNode> ranked = new ArrayList<>();
      for (int i : p.ranked()) {
        ranked.add(p.nodes().get(i));
      }
      assertThat(names(ranked)).isEqualTo(names(order.of(key).subList(0, 5)));
      p.nodes().forEach(n -> sets.merge(n.name(), 1, Integer::sum));
    }
    // Each node carries its share, 5/9 of the keys, within 5 %.
    for (RedisNode node : nodes) {
      assertThat(sets.get(node.name()) / (double) keys).as(node.name()).isBetween(5 / 9.0 * 0.95, 5 / 9.0 * 1.05);
    }
  }

  @Test
  void theIdsDecideTheSetNotTheAddresses() {
    List<RedisNode> nodes = nodes(9);
    List<RedisNode> moved = new ArrayList<>();
    for (int i = 9; i > 0; i--) {
      moved.add(ScriptedNode.silent("10.1.0." + i + ":6380")); // other addresses, in another order
    }
    Placements named = new Placements(nodes, List.of("a", "b", "c", "d", "e", "f", "g", "h", "i"), 5);
    Placements renamedAddresses = new Placements(moved, List.of("i", "h", "g", "f", "e", "d", "c", "b", "a"), 5);
    for (int k = 0; k < 500; k++) {
      String key = "redlock:lock:res" + k;
      assertThat(hosts(renamedAddresses.of(key).nodes())).containsExactlyInAnyOrderElementsOf(
          hosts(named.of(key).nodes()));
    }
  }

  @Test
  void aSemaphoresPermitsShareTheSetOfItsNameEachInItsOwnOrder() {
    List<RedisNode> nodes = nodes(9);
    Placements placements = new Placements(nodes, ids(nodes), 5);
    Placement name = placements.of("redlock:sem:s");
    boolean anotherOrder = false;
    for (int permit = 1; permit <= 20; permit++) {
      Placement p = placements.of("redlock:sem:s", "redlock:sem:s#" + permit);
      assertThat(p.nodes()).isEqualTo(name.nodes());
      anotherOrder |= p.ranked()[0] != name.ranked()[0];
    }
    assertThat(anotherOrder).as("some permit comes first on another node of the set").isTrue();
  }

  @Test
  void theSetSizeIsOddAndWithinTheNodesOrEveryNode() {
    assertThat(LockEngine.nodesPerResource(9, 0)).as("every node by default, as before sets").isEqualTo(9);
    assertThat(LockEngine.nodesPerResource(3, 0)).isEqualTo(3);
    assertThat(LockEngine.nodesPerResource(4, 0)).isEqualTo(4); // every node, as before sets
    assertThat(LockEngine.nodesPerResource(9, 7)).isEqualTo(7);
    assertThatThrownBy(() -> LockEngine.nodesPerResource(9, 4))
        .hasMessage("--nodes-per-resource must be odd (or all 9 nodes), not 4");
    assertThatThrownBy(() -> LockEngine.nodesPerResource(7, 9))
        .hasMessage("--nodes-per-resource must lie in 1..7 (the number of --redis nodes), not 9");
    assertThatThrownBy(() -> LockEngine.nodesPerResource(7, -1)).hasMessageContaining("1..7");
  }
}
