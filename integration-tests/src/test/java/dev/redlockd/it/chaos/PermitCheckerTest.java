package dev.redlockd.it.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The semaphore phase's checker on hand-made histories (N = 2). */
class PermitCheckerTest {
  private final PermitChecker checker = new PermitChecker(2);

  private static PermitSection s(int permit, long fence, long start, long end) {
    return new PermitSection("w" + fence, permit, fence, start, end);
  }

  private List<Violation.Kind> kinds(PermitSection... sections) {
    return checker.check(List.of(sections)).stream().map(Violation::kind).toList();
  }

  @Test
  void nHoldersAtOnceOnDistinctPermitsAreFine() {
    assertThat(kinds(s(1, 1, 0, 100), s(2, 1, 10, 90), s(1, 2, 100, 200))).isEmpty();
  }

  @Test
  void nPlusOneHoldersAtOnceAreOverTheLimit() {
    // Three holders on distinct permits of a semaphore of 2 (the third permit is out of range too).
    assertThat(kinds(s(1, 1, 0, 100), s(2, 1, 10, 90), s(3, 1, 50, 60)))
        .contains(Violation.Kind.PERMITS_OVER_LIMIT);
    // Three at once, even with permits in range: one of them shares a permit.
    assertThat(kinds(s(1, 1, 0, 100), s(2, 1, 10, 90), s(2, 2, 50, 60)))
        .contains(Violation.Kind.PERMITS_OVER_LIMIT, Violation.Kind.OVERLAP);
  }

  @Test
  void twoHoldersOfOnePermitOverlapEvenPastAShorterOneInBetween() {
    // 1 holds permit 1 long; 2 holds it briefly inside; 3 starts after 2 ended but before 1 did.
    assertThat(kinds(s(1, 1, 0, 500), s(1, 2, 10, 20), s(1, 3, 30, 40)))
        .containsExactly(Violation.Kind.OVERLAP, Violation.Kind.OVERLAP);
  }

  @Test
  void fencingTokensMustRisePerPermitNotAcrossPermits() {
    assertThat(kinds(s(1, 5, 0, 10), s(2, 1, 20, 30), s(1, 6, 40, 50))).isEmpty();
    assertThat(kinds(s(1, 5, 0, 10), s(1, 5, 20, 30))).containsExactly(Violation.Kind.FENCE_ORDER);
  }
}
