package dev.redlockd.engine;

import java.util.List;
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
    return of(fences.stream().mapToLong(Long::longValue).toArray(), quorum);
  }

  /**
   * The fence that nodes making {@code quorum} share, if any: {@code fences} per node of the
   * placement (0 or less: no vote). Counted pairwise, as there are no more fences than nodes.
   */
  static OptionalLong of(long[] fences, Quorum quorum) {
    boolean[] sharing = new boolean[fences.length];
    for (int i = 0; i < fences.length; i++) {
      long fence = fences[i];
      if (fence <= 0) {
        continue;
      }
      for (int j = 0; j < fences.length; j++) {
        sharing[j] = fences[j] == fence;
      }
      if (quorum.metBy(sharing)) {
        return OptionalLong.of(fence);
      }
    }
    return OptionalLong.empty();
  }

  /** As above over a count; counted pairwise, as there are no more fences than nodes (no map, no boxing per round). */
  static OptionalLong of(long[] fences, int quorum) {
    for (int i = 0; i < fences.length; i++) {
      long fence = fences[i];
      if (fence <= 0) {
        continue;
      }
      int count = 1; // the first occurrence counts the rest, so each fence is counted once
      for (int j = i + 1; j < fences.length; j++) {
        if (fences[j] == fence) {
          count++;
        }
      }
      if (count >= quorum) {
        return OptionalLong.of(fence);
      }
    }
    return OptionalLong.empty();
  }
}
