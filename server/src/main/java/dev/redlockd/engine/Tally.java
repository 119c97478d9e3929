package dev.redlockd.engine;

import java.util.List;
import java.util.function.Predicate;

/**
 * Counts one round of node replies. Only a node that still has its incarnation key votes:
 * one that restarted empty answers, but sits out until its quarantine is over.
 */
record Tally(int nodes, int answered, int voters, int yes) {

  int quorum() {
    return quorumOf(nodes);
  }

  int quarantined() {
    return answered - voters;
  }

  boolean quorumVoted() {
    return voters >= quorum();
  }

  boolean quorumSaidYes() {
    return yes >= quorum();
  }

  static int quorumOf(int nodes) {
    return nodes / 2 + 1;
  }

  static <T> Tally of(List<NodeResult<T>> results, Predicate<T> votes, Predicate<T> yes) {
    int answered = 0;
    int voters = 0;
    int said = 0;
    for (NodeResult<T> r : results) {
      if (!r.answered()) {
        continue;
      }
      answered++;
      if (votes.test(r.value())) {
        voters++;
        if (yes.test(r.value())) {
          said++;
        }
      }
    }
    return new Tally(results.size(), answered, voters, said);
  }
}
