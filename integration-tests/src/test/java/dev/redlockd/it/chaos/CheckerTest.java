package dev.redlockd.it.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker on hand-made histories: it must flag what breaks the lock and nothing else. */
class CheckerTest {
  private final Checker checker = new Checker(3, 0);

  private static CriticalSection section(long lease, long start, long end, long deadline) {
    return new CriticalSection("r", "holder-" + lease, ClientKind.RAW, lease, lease, start, end, deadline);
  }

  private static AcquireCall grant(long lease, long send, long arrival, long fence) {
    return AcquireCall.granted("r", ClientKind.RAW, 0, send, arrival, fence, lease);
  }

  private static List<Violation.Kind> kinds(List<Violation> found) {
    return found.stream().map(Violation::kind).toList();
  }

  @Test
  void twoHoldersInsideTheirDeadlinesAtOnceOverlap() {
    List<Violation> found = checker.overlaps(List.of(section(1, 0, 100, 200), section(2, 99, 150, 300)));
    assertThat(kinds(found)).containsExactly(Violation.Kind.OVERLAP);
  }

  @Test
  void aSectionStartingWhereTheLastEndedDoesNotOverlap() {
    assertThat(checker.overlaps(List.of(section(1, 0, 100, 200), section(2, 100, 150, 300)))).isEmpty();
  }

  @Test
  void aHolderPausedPastItsDeadlineIsExcusedForTheTimeAfterIt() {
    // Lease 1 was valid until 50 but kept going to 100; lease 2 came at 60.
    assertThat(checker.overlaps(List.of(section(1, 0, 100, 50), section(2, 60, 90, 300)))).isEmpty();
  }

  @Test
  void aHolderPausedPastItsDeadlineIsNotExcusedForTheTimeBeforeIt() {
    // Lease 1 was valid until 70; lease 2 came at 60, while lease 1 was still entitled to the lock.
    List<Violation> found = checker.overlaps(List.of(section(1, 0, 100, 70), section(2, 60, 90, 300)));
    assertThat(kinds(found)).containsExactly(Violation.Kind.OVERLAP);
  }

  @Test
  void anOverlapWithAnyEarlierSectionIsFoundNotOnlyWithTheLastOne() {
    // 1 runs long; 2 sits inside it; 3 starts after 2 ended but before 1 did.
    List<Violation> found = checker.overlaps(List.of(
        section(1, 0, 500, 600), section(2, 10, 20, 600), section(3, 30, 40, 600)));
    assertThat(kinds(found)).containsExactly(Violation.Kind.OVERLAP, Violation.Kind.OVERLAP);
  }

  @Test
  void sectionsOnDifferentResourcesNeverOverlap() {
    CriticalSection other = new CriticalSection("s", "h", ClientKind.RAW, 2, 2, 10, 90, 300);
    assertThat(checker.overlaps(List.of(section(1, 0, 100, 200), other))).isEmpty();
  }

  @Test
  void aGrantAskedForAfterAnotherArrivedMustCarryAHigherFence() {
    List<Violation> found = checker.fenceOrder(List.of(grant(1, 0, 10, 7), grant(2, 20, 30, 7)));
    assertThat(kinds(found)).containsExactly(Violation.Kind.FENCE_ORDER);
    assertThat(checker.fenceOrder(List.of(grant(1, 0, 10, 7), grant(2, 20, 30, 8)))).isEmpty();
  }

  @Test
  void grantsWhoseCallsOverlapInTimeMayCarryFencesInEitherOrder() {
    assertThat(checker.fenceOrder(List.of(grant(1, 0, 30, 8), grant(2, 20, 40, 7)))).isEmpty();
  }

  @Test
  void fencesCompareAsUnsigned64BitNumbers() {
    // uint64 above Long.MAX_VALUE is negative as a long: it must still count as higher.
    assertThat(checker.fenceOrder(List.of(grant(1, 0, 10, Long.MAX_VALUE), grant(2, 20, 30, Long.MIN_VALUE))))
        .isEmpty();
  }

  @Test
  void failedAcquiresTakeNoPartInTheFenceOrder() {
    AcquireCall failed = AcquireCall.failed("r", ClientKind.RAW, 0, 20, 30, Status.Code.ABORTED);
    assertThat(checker.fenceOrder(List.of(grant(1, 0, 10, 7), failed))).isEmpty();
  }

  @Test
  void theResourceMayNotAcceptAFenceBelowOneItAcceptedOrAnEqualOneFromAnotherLease() {
    List<Violation> found = checker.writes(List.of(
        new Write("r", 1, 8, 10, true, true),
        new Write("r", 1, 8, 11, true, true),
        new Write("r", 2, 7, 12, true, false),
        new Write("r", 3, 8, 13, true, true)));
    assertThat(kinds(found)).containsExactly(Violation.Kind.STALE_WRITE_ACCEPTED, Violation.Kind.STALE_WRITE_ACCEPTED);
  }

  @Test
  void aRefusedWriteIsExpectedPastTheWritersDeadlineAndAViolationWithinIt() {
    Write newer = new Write("r", 2, 9, 10, true, true);
    assertThat(checker.writes(List.of(newer, new Write("r", 1, 8, 20, false, false)))).isEmpty();
    assertThat(kinds(checker.writes(List.of(newer, new Write("r", 1, 8, 20, false, true)))))
        .containsExactly(Violation.Kind.VALID_WRITE_REFUSED);
  }

  @Test
  void aGrantDuringWhichAMajorityCouldNotVoteIsAViolation() {
    FaultTimeline timeline = new FaultTimeline();
    for (int node : new int[] {0, 1, 2}) {
      timeline.node(node, FaultTimeline.Kind.FROZEN, 100, 200);
    }
    assertThat(kinds(checker.grantsWithoutQuorum(List.of(grant(1, 120, 180, 5)), timeline)))
        .containsExactly(Violation.Kind.GRANT_WITHOUT_QUORUM);
    // Started before the freeze: the quorum may have answered in time.
    assertThat(checker.grantsWithoutQuorum(List.of(grant(1, 90, 180, 5)), timeline)).isEmpty();
  }

  @Test
  void slowNodesStillVoteButAKilledThenQuarantinedNodeDoesNotThroughout() {
    FaultTimeline timeline = new FaultTimeline();
    timeline.node(0, FaultTimeline.Kind.SLOW, 0, 1000);
    timeline.node(1, FaultTimeline.Kind.FROZEN, 0, 1000);
    timeline.node(2, FaultTimeline.Kind.DEAD, 0, 150);
    timeline.node(2, FaultTimeline.Kind.QUARANTINED, 150, 1000);
    assertThat(timeline.nodesSilentThroughout(100, 200)).isEqualTo(2);
    assertThat(checker.grantsWithoutQuorum(List.of(grant(1, 100, 200, 5)), timeline)).isEmpty();
    timeline.node(3, FaultTimeline.Kind.FROZEN, 50, 300);
    assertThat(kinds(checker.grantsWithoutQuorum(List.of(grant(1, 100, 200, 5)), timeline)))
        .containsExactly(Violation.Kind.GRANT_WITHOUT_QUORUM);
  }

  @Test
  void nearestRankPercentiles() {
    List<Double> values = List.of(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0);
    assertThat(Figures.percentile(values, 50)).isEqualTo(5.0);
    assertThat(Figures.percentile(values, 99)).isEqualTo(10.0);
    assertThat(Figures.percentile(List.of(), 50)).isNaN();
  }
}
