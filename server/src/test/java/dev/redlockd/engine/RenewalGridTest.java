package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Kept leases renew on a grid so that renewals due together leave together. */
class RenewalGridTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long STEP = KeptLease.MAX_RENEWAL_GRID_NANOS;

  @Test
  void renewalsOfLeasesStartedAtDifferentTimesFallDueTogether() {
    Duration ttl = Duration.ofSeconds(3);
    Random random = new Random(7);
    Set<Long> dueTimes = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      long now = 1_000_000 * MS + random.nextInt(1000) * MS + random.nextInt(1_000_000);
      long delay = KeptLease.onGrid(now, ttl.toNanos() / 3, ttl);
      assertThat(delay).isBetween(ttl.toNanos() / 3 - STEP, ttl.toNanos() / 3);
      dueTimes.add(now + delay);
    }
    // Leases started over one second: at most one distinct due time per grid step, not 1000.
    assertThat(dueTimes).hasSizeLessThanOrEqualTo((int) (1000 * MS / STEP) + 1);
  }

  @Test
  void theStepIsASmallShareOfAShortTtl() {
    Duration ttl = Duration.ofMillis(36); // step 3 ms (ttl/12), renewal every 12 ms
    for (long now = 0; now < 20 * MS; now += MS / 3) {
      long delay = KeptLease.onGrid(now, ttl.toNanos() / 3, ttl);
      assertThat(delay).isGreaterThan(9 * MS).isLessThanOrEqualTo(12 * MS);
      assertThat((now + delay) % (3 * MS)).isZero();
    }
  }

  @Test
  void negativeClockReadingsStayOnTheGrid() {
    Duration ttl = Duration.ofSeconds(3);
    long now = -123_456_789_012L; // System.nanoTime may be negative
    long delay = KeptLease.onGrid(now, ttl.toNanos() / 3, ttl);
    assertThat(delay).isBetween(ttl.toNanos() / 3 - STEP, ttl.toNanos() / 3);
    assertThat(Math.floorMod(now + delay, STEP)).isZero();
  }
}
