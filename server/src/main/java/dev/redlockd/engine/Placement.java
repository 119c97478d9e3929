package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.util.List;

/**
 * Where one key lives: the nodes of its replica set (in the --redis list's order) and what
 * counts as a quorum of them. Every round on the key goes to these nodes only, and is counted
 * over them: a grant, a renewal, a release, a Describe and a ForceRelease alike.
 *
 * @param nodes the key's replica set
 * @param ranked indexes into {@code nodes}, highest weight first: the order a thrifty round asks them in
 */
record Placement(List<RedisNode> nodes, int[] ranked) {

  /** How many of the set must say yes: a majority of the set, so that any two quorums share a node. */
  int quorum() {
    return Tally.quorumOf(nodes.size());
  }
}
