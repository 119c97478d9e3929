package dev.redlockd.engine;

import java.util.List;
import java.util.function.Predicate;

/**
 * Counts one round of node replies. Only a node that still has its incarnation key votes:
 * one that restarted empty answers, but sits out until its quarantine is over. Whether the
 * votes make a quorum is the {@link Quorum}'s to say (a majority of each of the key's sets);
 * the counts are for messages.
 *
 * @param quorum the fewest yes votes that can make a quorum
 * @param silentCouldMakeAQuorum whether the nodes that did not answer, with the yes votes, could make one
 */
record Tally(int nodes, int answered, int voters, int yes, int quorum, boolean quorumVoted, boolean quorumSaidYes,
    boolean silentCouldMakeAQuorum) {

  int quarantined() {
    return answered - voters;
  }

  static int quorumOf(int nodes) {
    return nodes / 2 + 1;
  }

  /** Counted over a majority of all the results' nodes (one set). */
  static <T> Tally of(List<NodeResult<T>> results, Predicate<T> votes, Predicate<T> yes) {
    return of(results, votes, yes, Quorum.majority(results.size()));
  }

  /** Counted over {@code quorum}, whose nodes are the results' (in order). */
  static <T> Tally of(List<NodeResult<T>> results, Predicate<T> votes, Predicate<T> yes, Quorum quorum) {
    int n = results.size();
    boolean[] voted = new boolean[n];
    boolean[] said = new boolean[n];
    boolean[] saidOrSilent = new boolean[n];
    int answered = 0;
    int voters = 0;
    int saidYes = 0;
    for (int i = 0; i < n; i++) {
      NodeResult<T> r = results.get(i);
      if (!r.answered()) {
        saidOrSilent[i] = true;
        continue;
      }
      answered++;
      if (votes.test(r.value())) {
        voters++;
        voted[i] = true;
        if (yes.test(r.value())) {
          saidYes++;
          said[i] = true;
          saidOrSilent[i] = true;
        }
      }
    }
    return new Tally(n, answered, voters, saidYes, quorum.smallest(), quorum.metBy(voted), quorum.metBy(said),
        quorum.metBy(saidOrSilent));
  }
}
