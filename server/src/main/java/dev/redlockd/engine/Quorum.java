package dev.redlockd.engine;

/**
 * Which of a key's nodes must say yes for a round on it to count: a majority of each of the
 * key's sets. With one node list a key has one set, and this is the majority count as ever.
 * During a membership change (--redis-next) a key has its set under the old list and its set
 * under the new one, and a grant needs a majority of both, as Raft's joint consensus does: the
 * grant then meets any grant made under the old list alone and any made under the new list
 * alone, and any other joint grant.
 *
 * <p>Nodes are indexes into the key's {@link Placement#nodes()}.
 */
final class Quorum {
  /** Per set, whether each node of the placement is in it. */
  private final boolean[][] sets;
  /** Per set, how many of its nodes must say yes. */
  private final int[] needs;
  private final int nodes;

  private Quorum(int nodes, boolean[][] sets) {
    this.nodes = nodes;
    this.sets = sets;
    this.needs = new int[sets.length];
    for (int s = 0; s < sets.length; s++) {
      int size = 0;
      for (boolean in : sets[s]) {
        size += in ? 1 : 0;
      }
      needs[s] = Tally.quorumOf(size);
    }
  }

  /** A majority of all {@code nodes}: one list. */
  static Quorum majority(int nodes) {
    boolean[] all = new boolean[nodes];
    java.util.Arrays.fill(all, true);
    return new Quorum(nodes, new boolean[][] {all});
  }

  /** A majority of the old set and a majority of the new set, each given as membership per node. */
  static Quorum joint(boolean[] inOld, boolean[] inNew) {
    if (inOld.length != inNew.length) {
      throw new IllegalArgumentException(inOld.length + " old memberships for " + inNew.length + " nodes");
    }
    return new Quorum(inOld.length, new boolean[][] {inOld.clone(), inNew.clone()});
  }

  int nodes() {
    return nodes;
  }

  /** Whether this needs a majority of more than one set (a membership change is under way). */
  boolean joint() {
    return sets.length > 1;
  }

  /** Whether node {@code node} belongs to set {@code set} (0: the old or only set, 1: the new set). */
  boolean inSet(int set, int node) {
    return sets[set][node];
  }

  /** How many sets this counts majorities of. */
  int setCount() {
    return sets.length;
  }

  /** A majority of set {@code set} alone (0: the old or only set, 1: the new set). */
  Quorum only(int set) {
    return sets.length == 1 ? this : new Quorum(nodes, new boolean[][] {sets[set]});
  }

  /** How many nodes of set {@code set} must say yes. */
  int need(int set) {
    return needs[set];
  }

  /** Whether the nodes marked in {@code yes} make a majority of every set. */
  boolean metBy(boolean[] yes) {
    for (int s = 0; s < sets.length; s++) {
      if (count(s, yes) < needs[s]) {
        return false;
      }
    }
    return true;
  }

  private int count(int set, boolean[] marked) {
    int count = 0;
    boolean[] in = sets[set];
    for (int i = 0; i < nodes; i++) {
      if (in[i] && marked[i]) {
        count++;
      }
    }
    return count;
  }

  /**
   * The fewest nodes that make a quorum: with one set its majority; with two, each set's
   * majority counted once where the sets share nodes.
   */
  int smallest() {
    if (sets.length == 1) {
      return needs[0];
    }
    int shared = 0;
    for (int i = 0; i < nodes; i++) {
      if (sets[0][i] && sets[1][i]) {
        shared++;
      }
    }
    return Math.max(Math.max(needs[0], needs[1]), needs[0] + needs[1] - shared);
  }

  /**
   * The next node of {@code order} a thrifty round should ask, or -1: the first one not yet
   * {@code asked} that belongs to a set which the nodes marked {@code hopeful} (said yes, or are
   * still being waited for) do not make a majority of. Asking from an empty start until this
   * says -1 gives the round's first asks: with one set the first majority of the order, as
   * before; with two, the shared nodes the order puts first count for both.
   */
  int next(int[] order, boolean[] asked, boolean[] hopeful) {
    for (int s = 0; s < sets.length; s++) {
      if (count(s, hopeful) >= needs[s]) {
        continue;
      }
      for (int i : order) {
        if (!asked[i] && sets[s][i]) {
          return i;
        }
      }
    }
    return -1;
  }

  /** The nodes a thrifty round asks first, in the order they are asked (see {@link #next}). */
  int[] firstAsks(int[] order) {
    boolean[] asked = new boolean[nodes];
    int[] first = new int[nodes];
    int count = 0;
    for (int i = next(order, asked, asked); i >= 0; i = next(order, asked, asked)) {
      asked[i] = true;
      first[count++] = i;
    }
    return java.util.Arrays.copyOf(first, count);
  }
}
