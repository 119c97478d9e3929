package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Renewals that holders ask for one at a time, a millisecond apart (KeepAlive requests of
 * many leases, each on its own schedule), wait up to {@link RenewalBatch#GATHER_NANOS} for one
 * another and share each node's call, on five real Redis nodes; and a short ttl waits less.
 */
class GatheredRenewalsTest {
  private static final int LEASES = 40;
  private static final Duration TTL = Duration.ofSeconds(3);

  @Test
  void renewalsAskedAMillisecondApartShareANodesCall() throws Exception {
    try (EngineHarness h = EngineHarness.start(5, EngineHarness.testConfig())) {
      List<KeptLease> kept = new ArrayList<>();
      List<FirstRenewal> answered = new ArrayList<>();
      try {
        for (int i = 0; i < LEASES; i++) {
          String token = h.engine.acquire("gathered/" + i, TTL, Duration.ZERO, "").get(10, TimeUnit.SECONDS).token();
          FirstRenewal firstAnswer = new FirstRenewal();
          answered.add(firstAnswer);
          kept.add(h.engine.keep("gathered/" + i, token, TTL, firstAnswer));
        }
        long[] before = h.scriptCalls();
        long[] askedAt = new long[LEASES];
        long askingFrom = System.nanoTime();
        for (int i = 0; i < LEASES; i++) {
          askedAt[i] = System.nanoTime();
          kept.get(i).renewNow(null, 1);
          TimeUnit.MILLISECONDS.sleep(1);
        }
        long askingMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - askingFrom);
        long slowest = 0;
        for (int i = 0; i < LEASES; i++) {
          slowest = Math.max(slowest, answered.get(i).heldAt.get(TTL.toMillis(), TimeUnit.MILLISECONDS) - askedAt[i]);
        }
        long[] after = h.scriptCalls();
        long calls = 0;
        for (int n = 0; n < after.length; n++) {
          calls = Math.max(calls, after[n] - before[n]);
        }
        System.out.printf("%d renewals asked 1 ms apart over %d ms: %d calls on the busiest node, slowest answered "
            + "after %d ms%n", LEASES, askingMillis, calls, TimeUnit.NANOSECONDS.toMillis(slowest));
        // Each send waits 10 ms from the first renewal of its batch, so a node gets at most one
        // call per 10 ms of asking, and one more for the last batch. Sent as they came, it got 11
        // for 40 renewals asked over about 45 ms (those that came while a send ran shared it).
        long gatherMillis = TimeUnit.NANOSECONDS.toMillis(RenewalBatch.GATHER_NANOS);
        assertThat(calls).as("script calls on a node for %d renewals asked over %d ms", LEASES, askingMillis)
            .isLessThanOrEqualTo(askingMillis / gatherMillis + 2);
        // A replacement stream is held to a twelfth of the ttl for its first answer (rule 19).
        assertThat(TimeUnit.NANOSECONDS.toMillis(slowest)).as("slowest renewal, ms").isLessThan(TTL.toMillis() / 12);
      } finally {
        kept.forEach(KeptLease::stop);
      }
    }
  }

  @Test
  void aShortTtlWaitsAShareOfItsTtl() {
    assertThat(RenewalBatch.gatherNanos(Duration.ofSeconds(3))).isEqualTo(RenewalBatch.GATHER_NANOS);
    assertThat(RenewalBatch.gatherNanos(Duration.ofMillis(30))).isEqualTo(TimeUnit.MILLISECONDS.toNanos(1));
    assertThat(RenewalBatch.gatherNanos(Duration.ofMillis(10))).isLessThan(TimeUnit.MILLISECONDS.toNanos(1));
  }
}
