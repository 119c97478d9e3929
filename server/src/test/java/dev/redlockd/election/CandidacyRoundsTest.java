package dev.redlockd.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.engine.Grant;
import dev.redlockd.engine.LeaseNotHeldException;
import dev.redlockd.engine.QuorumUnavailableException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * One candidacy driven answer by answer through a fake election space: which mark each report
 * carries, how terms are ordered, and what a proclaim's failure means.
 */
class CandidacyRoundsTest {
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final String TOKEN = "rounds-token-aaaaaaaaaaaaaaaaaaaaaaa";

  private final FakeElectionSpace space = new FakeElectionSpace();
  private final Reports reports = new Reports();

  private Candidacy campaign(String value, long mark) {
    Candidacy candidacy = new Candidacy(space, "e", value, TTL, "", false, mark, reports);
    candidacy.start();
    return candidacy;
  }

  private static Grant grant(long term) {
    return new Grant("e", TOKEN, TTL.minusMillis(100), term);
  }

  /** The candidate is granted at {@code term} and its first renewal, begun at {@code mark}, confirms it. */
  private FakeElectionSpace.Kept elected(long term, long mark) {
    space.acquires.remove().answer().complete(grant(term));
    FakeElectionSpace.Kept lease = space.kept.get(space.kept.size() - 1);
    lease.listener.held(grant(term), mark);
    return lease;
  }

  @Test
  void aGrantIsNotReportedUntilARenewalDatedFromBeforeItBeganConfirmsIt() {
    Candidacy candidacy = campaign("b", 1);
    candidacy.update("b", null, 7); // a ping while waiting: the round that grants may have begun before it
    space.acquires.remove().answer().complete(grant(40));
    assertThat(reports.leading()).as("a grant's answer cannot be dated: the round began at an unknown mark").isEmpty();
    FakeElectionSpace.Kept lease = space.kept.get(0);
    assertThat(lease.renewMarks).as("renewed at once").hasSize(1);
    lease.listener.held(grant(40), 7); // the renewal that began after mark 7
    assertThat(reports.leading()).containsExactly(
        new Reports.Report(new Candidacy.Leadership(40, "b", grant(40).validity()), 7));
  }

  @Test
  void aProclaimIsDatedByTheMarkBeforeItsRoundBeganNotByOneThatCameDuringIt() {
    Candidacy candidacy = campaign("a", 1);
    elected(40, 1);
    candidacy.update("b", null, 5); // proclaim "b": its round begins now
    assertThat(space.refreshes).hasSize(1);
    candidacy.update("b", null, 9); // a ping while the proclaim's round is under way
    space.refreshes.remove().answer().complete(grant(40));
    assertThat(reports.last().leadership().value()).isEqualTo("b");
    assertThat(reports.last().mark()).as("the validity began with the round, before mark 9").isEqualTo(5);
  }

  @Test
  void aTermPastTwoToThe63ComesAfterTheOneBeforeIt() {
    long signedMax = Long.MAX_VALUE;
    long next = Long.MIN_VALUE; // 2^63 as uint64
    Candidacy candidacy = campaign("a", 1);
    FakeElectionSpace.Kept lease = elected(signedMax, 1);
    lease.listener.held(grant(next), 2); // after a fault, a renewal reports a higher fencing token
    assertThat(reports.last().leadership().term()).isEqualTo(next);
    assertThat(space.announced).containsExactly("L 9223372036854775807 0 a", "L 9223372036854775808 0 a");
    candidacy.update("b", null, 3);
    space.refreshes.remove().answer().complete(grant(signedMax)); // a late agreement on the older fence
    assertThat(reports.last().leadership().term()).as("the term never moves back").isEqualTo(next);
  }

  @Test
  void aProclaimThatReachedNoQuorumIsTriedAgainAndDoesNotEndTheLeadership() {
    Candidacy candidacy = campaign("a", 1);
    elected(40, 1);
    candidacy.update("b", null, 2);
    space.refreshes.remove().answer().completeExceptionally(new QuorumUnavailableException(
        "the refresh reached no quorum, and the nodes that did not answer may still hold the lease"));
    assertThat(reports.lost()).isEmpty();
    assertThat(space.announced).doesNotContain("V 40");
    await().atMost(Duration.ofSeconds(5)).until(() -> !space.refreshes.isEmpty()); // retried
    space.refreshes.remove().answer().complete(grant(40));
    assertThat(reports.last().leadership().value()).isEqualTo("b");
    assertThat(reports.lost()).isEmpty();
  }

  @Test
  void aProclaimThatFindsTheLeaseGoneEndsTheLeadershipAndAnnouncesTheVacancy() {
    Candidacy candidacy = campaign("a", 1);
    FakeElectionSpace.Kept lease = elected(40, 1);
    candidacy.update("b", null, 2);
    space.refreshes.remove().answer().completeExceptionally(new LeaseNotHeldException("e", 1, 3));
    assertThat(reports.lost()).singleElement().isInstanceOf(LeaseNotHeldException.class);
    assertThat(lease.stopped).isTrue();
    assertThat(space.announced).endsWith("V 40");
  }
}
