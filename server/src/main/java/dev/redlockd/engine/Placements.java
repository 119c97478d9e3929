package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which nodes each key lives on: the first {@code perKey} nodes of its rendezvous order over
 * all of them ({@link PreferenceOrder}, by the nodes' stable ids). Every replica given the same
 * nodes under the same ids computes the same set for a key, whatever order its list is in, so
 * the quorums of two replicas on one key meet as the quorums of one replica do. With
 * {@code perKey} equal to the number of nodes, every key lives on every node, as before sets.
 *
 * <p>During a membership change (--redis OLD --redis-next NEW) the nodes are both lists' (the
 * union by id), and a key lives on its set under OLD and its set under NEW: the first
 * {@code perKey} of its order among OLD's nodes, and among NEW's. A node's weight for a key
 * depends on its id alone, so each set is the one a replica given that list alone computes.
 */
final class Placements {
  private final List<RedisNode> nodes;
  private final PreferenceOrder preference;
  private final boolean[] inOld;
  private final boolean[] inNew;
  private final int perOld;
  private final int perNew;
  private final boolean joint;
  /** One list, every key on every node: the one placement's quorum, made once. */
  private final Quorum everyNode;
  /** One list: every set's quorum (all sets are as large), made once. */
  private final Quorum setMajority;

  /** One list: {@code nodes} under {@code ids}, each key on {@code perKey} of them. */
  Placements(List<RedisNode> nodes, List<String> ids, int perKey) {
    this(nodes, ids, all(nodes.size()), null, perKey, perKey);
  }

  /**
   * A membership change: {@code nodes} (both lists' nodes) under {@code ids}; {@code inOld} and
   * {@code inNew} say which list each is in (null {@code inNew}: one list, {@code inOld} all
   * true); each key on {@code perOld} of the old list's nodes and {@code perNew} of the new's.
   */
  Placements(List<RedisNode> nodes, List<String> ids, boolean[] inOld, boolean[] inNew, int perOld, int perNew) {
    check(count(inOld), perOld);
    if (inNew != null) {
      check(count(inNew), perNew);
    }
    this.nodes = List.copyOf(nodes);
    this.preference = new PreferenceOrder(nodes, ids);
    this.inOld = inOld.clone();
    this.inNew = inNew == null ? null : inNew.clone();
    this.joint = inNew != null;
    this.perOld = perOld;
    this.perNew = joint ? perNew : perOld;
    this.setMajority = Quorum.majority(perOld);
    this.everyNode = !joint && perOld == nodes.size() ? setMajority : null;
  }

  private static boolean[] all(int n) {
    boolean[] all = new boolean[n];
    Arrays.fill(all, true);
    return all;
  }

  private static int count(boolean[] in) {
    int count = 0;
    for (boolean b : in) {
      count += b ? 1 : 0;
    }
    return count;
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

  /** How many nodes a key lives on (under the old list, during a membership change). */
  int perKey() {
    return perOld;
  }

  /** Whether a membership change is under way: two lists, and a quorum of each key's set under both. */
  boolean joint() {
    return joint;
  }

  /** How many nodes of a key's set must say yes (under the old list, during a membership change). */
  int quorum() {
    return Tally.quorumOf(perOld);
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
    int[] setRanks = preference.ranks(setKey);
    boolean[] old = firstOf(setRanks, inOld, perOld);
    boolean[] next = joint ? firstOf(setRanks, inNew, perNew) : null;
    int[] local = new int[n]; // a node's index in the placement, or -1
    List<RedisNode> placed = everyNode != null ? nodes : new ArrayList<>();
    int size = 0;
    for (int i = 0; i < n; i++) {
      if (old[i] || (joint && next[i])) {
        if (everyNode == null) {
          placed.add(nodes.get(i));
        }
        local[i] = size++;
      } else {
        local[i] = -1;
      }
    }
    int[] orderRanks = setKey.equals(orderKey) ? setRanks : preference.ranks(orderKey);
    int[] ranked = new int[size];
    int at = 0;
    // During a change the nodes of both sets come first: each of their yes votes counts twice.
    for (int pass = joint ? 0 : 1; pass < 2; pass++) {
      for (int i : orderRanks) {
        boolean shared = joint && old[i] && next[i];
        if (local[i] >= 0 && (pass == 0) == shared) {
          ranked[at++] = local[i];
        }
      }
    }
    if (everyNode != null) {
      return new Placement(nodes, ranked, everyNode);
    }
    Quorum quorum;
    if (joint) {
      boolean[] localOld = new boolean[size];
      boolean[] localNew = new boolean[size];
      for (int i = 0; i < n; i++) {
        if (local[i] >= 0) {
          localOld[local[i]] = old[i];
          localNew[local[i]] = next[i];
        }
      }
      quorum = Quorum.joint(localOld, localNew);
    } else {
      quorum = setMajority;
    }
    return new Placement(List.copyOf(placed), ranked, quorum);
  }

  /** The first {@code count} nodes of {@code ranks} that are {@code in} the list. */
  private static boolean[] firstOf(int[] ranks, boolean[] in, int count) {
    boolean[] first = new boolean[ranks.length];
    int taken = 0;
    for (int i = 0; i < ranks.length && taken < count; i++) {
      if (in[ranks[i]]) {
        first[ranks[i]] = true;
        taken++;
      }
    }
    return first;
  }
}
