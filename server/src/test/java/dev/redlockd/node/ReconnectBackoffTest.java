package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ReconnectBackoffTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  @Test
  void waitsDoubleFromTwentyFiveMillisecondsUpToOneSecond() {
    ReconnectBackoff top = new ReconnectBackoff(() -> 1.0); // the top of each range
    long[] waits = new long[8];
    for (int i = 0; i < waits.length; i++) {
      waits[i] = top.failedNanos();
    }
    assertThat(waits).containsExactly(25 * MS, 50 * MS, 100 * MS, 200 * MS, 400 * MS, 800 * MS, 1000 * MS,
        1000 * MS);
  }

  @Test
  void eachWaitIsDrawnBetweenHalfAndAllOfItsCeiling() {
    ReconnectBackoff bottom = new ReconnectBackoff(() -> 0.0);
    assertThat(bottom.failedNanos()).isEqualTo(12_500_000L);
    assertThat(bottom.failedNanos()).isEqualTo(25 * MS);
    ReconnectBackoff random = new ReconnectBackoff();
    for (int i = 0; i < 1000; i++) {
      long ceiling = Math.min(1000 * MS, (25 * MS) << Math.min(i, 20));
      assertThat(random.failedNanos()).isBetween(ceiling / 2, ceiling);
    }
  }

  @Test
  void anAnswerStartsTheWaitsOver() {
    ReconnectBackoff backoff = new ReconnectBackoff(() -> 1.0);
    for (int i = 0; i < 10; i++) {
      backoff.failedNanos();
    }
    backoff.reset();
    assertThat(backoff.failedNanos()).isEqualTo(25 * MS);
  }
}
