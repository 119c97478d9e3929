package dev.redlockd.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** A NodeShareBench point's arithmetic: shares, µs per cycle, the ceiling, and when a point is invalid. */
class NodeShareTest {
  private static final OpenRate.Outcome RAMP = new OpenRate.Outcome(20, 45_000, 45_000, Map.of());

  /** 7 nodes, 10 s at 4,000 cycles/s: node 1 took part in every cycle, the others in 2,000 of them each. */
  private static NodeShare point(boolean thrifty, long done, Map<String, Long> failed) {
    long[] scripts = {2 * done, 4_000, 4_000, 4_000, 4_000, 4_000, 4_000};
    double[] cpu = {0.8, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02};
    return new NodeShare(7, 5, thrifty, 4_000, RAMP, new OpenRate.Outcome(10, done, done, failed),
        new NodeShareBench.NodeReading(cpu, scripts), 0.5);
  }

  @Test
  void sharesMicrosAndTheCeilingComeFromEachNodesOwnFigures() {
    NodeShare p = point(true, 40_000, Map.of());
    assertThat(p.share(0)).isEqualTo(1.0);
    assertThat(p.share(1)).isEqualTo(0.05);
    assertThat(p.micros(0)).isCloseTo(20.0, within(1e-9)); // 0.8 s over 40,000 cycles
    assertThat(p.micros(1)).isCloseTo(10.0, within(1e-9)); // 0.02 s over 2,000 cycles
    assertThat(p.cores(0)).isCloseTo(0.08, within(1e-9));
    // Node 1 runs out first: 4,000 cycles/s used 0.08 of its core.
    assertThat(p.ceiling(0)).isCloseTo(50_000, within(1e-6));
    assertThat(p.tableRow()).contains("| 50,000 |");
    assertThat(p.expectedShare()).isCloseTo(3 / 7.0, within(1e-12));
    assertThat(point(false, 40_000, Map.of()).expectedShare()).isCloseTo(5 / 7.0, within(1e-12));
  }

  @Test
  void aPointBelowNinetySevenPercentOfTheRateOrWithAFailedCycleIsInvalid() {
    assertThat(point(true, 40_000, Map.of()).valid()).isTrue();
    assertThat(point(true, 38_800, Map.of()).valid()).as("97 %% of the rate").isTrue();
    assertThat(point(true, 38_799, Map.of()).valid()).as("just below 97 %% of the rate").isFalse();
    NodeShare failed = point(true, 40_000, Map.of("UNAVAILABLE", 1L));
    assertThat(failed.valid()).isFalse();
    assertThat(failed.tableRow()).contains("**no**");
  }
}
