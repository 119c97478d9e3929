package dev.redlockd.engine;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The fence a quorum of the nodes holding a lease agree on. A grant leaves its fence on a
 * quorum (raised there before it is granted); a node that answered after that quorum may hold
 * a higher one it drew from its own floor. The quorum's fence is the lease's: it exceeds every
 * earlier grant's (their quorums meet this one) and every later grant will exceed it.
 */
final class QuorumFence {
  private QuorumFence() {}

  /** The fence at least {@code quorum} of {@code fences} share, if any (fences of 0 are no vote). */
  static OptionalLong of(List<Long> fences, int quorum) {
    Map<Long, Integer> count = new HashMap<>();
    for (long fence : fences) {
      if (fence > 0 && count.merge(fence, 1, Integer::sum) >= quorum) {
        return OptionalLong.of(fence);
      }
    }
    return OptionalLong.empty();
  }
}
