package dev.redlockd.it.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.it.conformance.PermitHolds.Hold;
import org.junit.jupiter.api.Test;

/** The permits scenario's checks on made-up holds: they pass a semaphore that kept its bound, and fail each way one can break it. */
class PermitHoldsTest {
  /** Three permits held back to back twice over, the second holder of each with a higher token. */
  private static PermitHolds bounded() {
    PermitHolds holds = new PermitHolds(3);
    holds.add(new Hold(0, 1, 10, 0, 100));
    holds.add(new Hold(1, 2, 20, 5, 100));
    holds.add(new Hold(2, 3, 30, 10, 90));
    holds.add(new Hold(3, 1, 11, 100, 200)); // begins the instant permit 1's first holder ended
    holds.add(new Hold(4, 2, 21, 101, 150));
    holds.add(new Hold(5, 3, 31, 95, 130));
    return holds;
  }

  @Test
  void holdsThatKeptTheBoundPass() {
    PermitHolds holds = bounded();
    holds.check();
    assertThat(holds.mostAtOnce()).isEqualTo(3);
    assertThat(holds.permitsSeen()).containsExactly(1, 2, 3);
  }

  @Test
  void aFourthHolderAtOnceFails() {
    PermitHolds holds = bounded();
    holds.add(new Hold(5, 1, 99, 50, 60)); // naive admission: a fourth holder, though under a permit's name
    assertThat(holds.mostAtOnce()).isEqualTo(4);
    assertThatThrownBy(holds::check).isInstanceOf(AssertionError.class);
  }

  @Test
  void aPermitOutsideOneToNFails() {
    PermitHolds zero = bounded();
    zero.add(new Hold(0, 0, 1, 300, 310)); // a lock's lease, not a permit
    assertThatThrownBy(zero::check).hasMessageContaining("permit of");
    PermitHolds above = bounded();
    above.add(new Hold(0, 4, 1, 300, 310));
    assertThatThrownBy(above::check).hasMessageContaining("permit of");
  }

  @Test
  void twoHoldersOfOnePermitAtOnceFail() {
    PermitHolds holds = new PermitHolds(3);
    holds.add(new Hold(0, 1, 10, 0, 100));
    holds.add(new Hold(1, 1, 11, 50, 150));
    assertThatThrownBy(holds::check).hasMessageContaining("began before");
  }

  @Test
  void aFencingTokenThatDoesNotRiseFails() {
    PermitHolds holds = new PermitHolds(3);
    holds.add(new Hold(0, 2, 10, 0, 100));
    holds.add(new Hold(1, 2, 10, 100, 150));
    assertThatThrownBy(holds::check).hasMessageContaining("fencing tokens rise");
  }
}
