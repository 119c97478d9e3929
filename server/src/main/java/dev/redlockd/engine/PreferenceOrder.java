package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The order in which a thrifty round asks the nodes about one key: rendezvous hashing (highest
 * random weight) over the nodes' names, so that each node comes first for an equal share of the
 * keys, one key's rounds keep going to the same nodes, and removing a node leaves every other
 * node's place relative to the rest unchanged. Each node is known by its stable id (the name
 * given in --redis, else its host:port), never by where it stands in the list, so that every
 * replica ranks the nodes of one key alike whatever order its list is in.
 */
final class PreferenceOrder {
  private final List<RedisNode> nodes;
  private final long[] ids;

  /** Each node known by its name (host:port). */
  PreferenceOrder(List<RedisNode> nodes) {
    this(nodes, nodes.stream().map(RedisNode::name).toList());
  }

  /** Each node known by the id at the same place in {@code nodeIds}. */
  PreferenceOrder(List<RedisNode> nodes, List<String> nodeIds) {
    if (nodeIds.size() != nodes.size()) {
      throw new IllegalArgumentException(nodeIds.size() + " node ids for " + nodes.size() + " nodes");
    }
    this.nodes = List.copyOf(nodes);
    this.ids = new long[nodes.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = hash(nodeIds.get(i));
    }
  }

  /** The nodes for {@code key}, highest weight first. */
  List<RedisNode> of(String key) {
    int[] ranked = ranks(key);
    List<RedisNode> order = new ArrayList<>(ranked.length);
    for (int i : ranked) {
      order.add(nodes.get(i));
    }
    return order;
  }

  /** The indexes (into the node list) for {@code key}, highest weight first. */
  int[] ranks(String key) {
    long keyHash = hash(key);
    int n = ids.length;
    long[] weights = new long[n];
    int[] ranked = new int[n];
    for (int i = 0; i < n; i++) {
      weights[i] = weight(keyHash, ids[i]);
      ranked[i] = i;
    }
    // Insertion sort: there are a handful of nodes, and no boxing per round.
    for (int i = 1; i < n; i++) {
      int node = ranked[i];
      int j = i - 1;
      while (j >= 0 && higher(weights, node, ranked[j])) {
        ranked[j + 1] = ranked[j];
        j--;
      }
      ranked[j + 1] = node;
    }
    return ranked;
  }

  /** Weights compared unsigned; equal weights (as good as never) fall back to the node list's order. */
  private static boolean higher(long[] weights, int a, int b) {
    int c = Long.compareUnsigned(weights[a], weights[b]);
    return c > 0 || (c == 0 && a < b);
  }

  /** One node's weight for one key: both hashes mixed, so that each node's weights are independent of the others'. */
  static long weight(long keyHash, long nodeId) {
    return mix(keyHash ^ mix(nodeId));
  }

  /** FNV-1a over the UTF-8 bytes, then mixed: a stable hash, the same in every JVM and on every replica. */
  static long hash(String text) {
    long h = 0xcbf29ce484222325L;
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return mix(h);
  }

  /** SplitMix64's finaliser: every input bit reaches every output bit. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
