package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.util.List;

/**
 * Where one key lives: the nodes of its replica set (in the --redis list's order) and which of
 * them make a quorum. Every round on the key goes to these nodes only, and is counted over them:
 * a grant, a renewal, a release, a Describe and a ForceRelease alike. During a membership change
 * the nodes are the key's old set and its new set together, and the quorum needs a majority of each.
 *
 * @param nodes the key's replica set (both sets, during a membership change)
 * @param ranked indexes into {@code nodes}, the order a thrifty round asks them in: highest weight
 *     first, and during a membership change the nodes of both sets before the others
 * @param quorum which of {@code nodes} must say yes
 */
record Placement(List<RedisNode> nodes, int[] ranked, Quorum quorum) {}
