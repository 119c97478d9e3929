package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Which nodes each key lives on: the first {@code perKey} nodes of its rendezvous order over
 * all of them ({@link PreferenceOrder}, by the nodes' stable ids). Every replica given the same
 * nodes under the same ids computes the same set for a key, whatever order its list is in, so
 * the quorums of two replicas on one key meet as the quorums of one replica do. With
 * {@code perKey} equal to the number of nodes, every key lives on every node, as before sets.
 */
final class Placements {
  private final List<RedisNode> nodes;
  private final PreferenceOrder preference;
  private final int perKey;

  Placements(List<RedisNode> nodes, List<String> ids, int perKey) {
    check(nodes.size(), perKey);
    this.nodes = List.copyOf(nodes);
    this.preference = new PreferenceOrder(nodes, ids);
    this.perKey = perKey;
  }

  /**
   * Refuses a set size that is not 1..N, or is even while below N (an even set's quorum is no
   * cheaper to lose than the odd set one smaller, and costs a node more per round). N itself
   * may be even: every key on every node, as before sets.
   */
  static void check(int nodeCount, int perKey) {
    if (perKey < 1 || perKey > nodeCount) {
      throw new IllegalArgumentException("--nodes-per-resource must lie in 1.." + nodeCount
          + " (the number of --redis nodes), not " + perKey);
    }
    if (perKey < nodeCount && perKey % 2 == 0) {
      throw new IllegalArgumentException("--nodes-per-resource must be odd (or all " + nodeCount
          + " nodes), not " + perKey);
    }
  }

  /**
   * The default set size: every node, as before sets. Not five beyond five nodes yet: a replica
   * of an earlier version puts every resource on all N nodes, and during a rolling upgrade its
   * quorum of N and a new replica's quorum of a five-node set need not share a node (4 of 7 and
   * 3 of 5). Until the nodes record the placement, so that a replica can refuse to start beside
   * another one's, going to sets is the operator's explicit step, with every replica stopped.
   */
  static int defaultPerKey(int nodeCount) {
    return nodeCount;
  }

  int perKey() {
    return perKey;
  }

  /** How many nodes of a key's set must say yes. */
  int quorum() {
    return Tally.quorumOf(perKey);
  }

  /** The placement of {@code key}: its set, asked in its own preference order. */
  Placement of(String key) {
    return of(key, key);
  }

  /**
   * The set of {@code setKey}, asked in the preference order of {@code orderKey}: the permits of a
   * semaphore share one set (so that a permit round meets every node that holds a permit of the
   * semaphore, and sees its limit), while each permit comes first on nodes of its own.
   */
  Placement of(String setKey, String orderKey) {
    int n = nodes.size();
    boolean[] inSet = new boolean[n];
    int[] setRanks = preference.ranks(setKey);
    for (int i = 0; i < perKey; i++) {
      inSet[setRanks[i]] = true;
    }
    List<RedisNode> set = perKey == n ? nodes : new ArrayList<>(perKey);
    int[] local = new int[n]; // a node's index in the set
    for (int i = 0, at = 0; i < n; i++) {
      if (inSet[i]) {
        if (perKey != n) {
          set.add(nodes.get(i));
        }
        local[i] = at++;
      }
    }
    int[] orderRanks = setKey.equals(orderKey) ? setRanks : preference.ranks(orderKey);
    int[] ranked = new int[perKey];
    int at = 0;
    for (int i : orderRanks) {
      if (inSet[i]) {
        ranked[at++] = local[i];
      }
    }
    return new Placement(perKey == n ? nodes : List.copyOf(set), ranked);
  }
}
