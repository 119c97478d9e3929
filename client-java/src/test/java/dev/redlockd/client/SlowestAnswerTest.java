package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SlowestAnswerTest {
  private static final long PERIOD = 1_000;
  private static final long TTL = 4 * PERIOD;

  private final SlowestAnswer slowest = new SlowestAnswer();

  @Test
  void keepsTheSlowestAndFadesItByHalfEveryTtl() {
    assertThat(slowest.nanos(0, PERIOD)).isZero();
    slowest.answered(800, 100, PERIOD);
    slowest.answered(300, 200, PERIOD); // faster: the slower one still counts
    assertThat(slowest.nanos(100, PERIOD)).isEqualTo(800);
    assertThat(slowest.nanos(100 + TTL, PERIOD)).isEqualTo(400);
    assertThat(slowest.nanos(100 + 2 * TTL, PERIOD)).isEqualTo(200);
    slowest.answered(300, 100 + 2 * TTL, PERIOD); // slower than what is left of the 800
    assertThat(slowest.nanos(100 + 2 * TTL, PERIOD)).isEqualTo(300);
  }

  @Test
  void anAnswerLaterThanTheTtlIsLeftOut() {
    slowest.answered(TTL + 1, 0, PERIOD);
    assertThat(slowest.nanos(0, PERIOD)).isZero();
    slowest.answered(TTL, 0, PERIOD);
    assertThat(slowest.nanos(0, PERIOD)).isEqualTo(TTL);
  }
}
