package dev.redlockd.server;

import dev.redlockd.node.NodeAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Redis nodes this replica uses: --redis, and during a membership change --redis-next too.
 * The nodes are both lists' together, one per id; a node in both lists is one node, and must be
 * given the same address in each (else which of the two is it?).
 *
 * @param nodes every node, --redis's in its order, then --redis-next's that are not in --redis
 * @param next the ids of --redis-next, when a membership change is under way
 */
record NodeLists(List<NodeAddress> nodes, List<String> old, Optional<List<String>> next) {

  /** Parses --redis and --redis-next (blank: none); IllegalArgumentException with one line naming the flag. */
  static NodeLists parse(String redis, String redisNext) {
    List<NodeAddress> old = parseFlag("--redis", redis);
    if (redisNext == null || redisNext.isBlank()) {
      return new NodeLists(old, ids(old), Optional.empty());
    }
    List<NodeAddress> next = parseFlag("--redis-next", redisNext);
    if (!old.stream().allMatch(NodeAddress::named) || !next.stream().allMatch(NodeAddress::named)) {
      // The records that guard the change name nodes by id; a node known by its address written
      // two ways (a DNS name, an IP, a proxy) would look like two lists to them.
      throw new IllegalArgumentException("--redis-next needs every node of both lists named (id=redis://host:port), "
          + "in --redis too: a membership change is guarded by records that name the nodes by id");
    }
    Map<String, NodeAddress> byId = new LinkedHashMap<>();
    old.forEach(a -> byId.put(a.id(), a));
    for (NodeAddress a : next) {
      NodeAddress known = byId.putIfAbsent(a.id(), a);
      if (known != null && (!known.name().equals(a.name()) || known.tls() != a.tls())) {
        throw new IllegalArgumentException("node id '" + a.id() + "' names " + known + " in --redis but " + a
            + " in --redis-next: a node in both lists must be given the same address in each");
      }
    }
    if (ids(old).equals(ids(next))) {
      throw new IllegalArgumentException("--redis-next lists the same nodes as --redis: there is no change to make");
    }
    List<NodeAddress> all = new ArrayList<>(byId.values());
    if (all.stream().map(NodeAddress::name).distinct().count() != all.size()) {
      throw new IllegalArgumentException("--redis and --redis-next give one Redis node two different ids");
    }
    return new NodeLists(List.copyOf(all), ids(old), Optional.of(ids(next)));
  }

  private static List<NodeAddress> parseFlag(String flag, String list) {
    try {
      return NodeAddress.parseList(list);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(flag + ": " + e.getMessage(), e); // never shows a password
    }
  }

  private static List<String> ids(List<NodeAddress> nodes) {
    return nodes.stream().map(NodeAddress::id).toList();
  }

  /**
   * Whether every node has an id of its own: only then does this replica keep the membership
   * records (an address written another way by another replica, or a proxy in front of a node,
   * would make a list of addresses look like another list, and refuse its start for --max-ttl).
   */
  boolean named() {
    return nodes.stream().allMatch(NodeAddress::named);
  }

  /** The ids of {@link #nodes}, in order. */
  List<String> ids() {
    return ids(nodes);
  }
}
