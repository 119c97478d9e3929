package dev.redlockd.it.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.FrozenNodeContention;
import dev.redlockd.it.support.LiveServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Thrifty rounds (a quorum of nodes per round) through the real server over real sockets and
 * five real Redis nodes: contending clients never overlap and their fences rise, while one node
 * is SIGSTOPped mid-run (grants and renewals that asked it widen to the next nodes; a renewal
 * whose lease it held puts the lease back on a free node).
 */
class ThriftyExclusionTest {
  private static final int CLIENTS = 16;
  private static final int GRANTS_PER_CLIENT = 10;

  @Test
  void contendingClientsNeverOverlapAndFencesRiseWhileANodeIsFrozen() throws Exception {
    try (LiveServer h = new LiveServer(5, "--thrifty-rounds")) {
      FrozenNodeContention run = new FrozenNodeContention(h, Duration.ofSeconds(2), "th-a", "th-b", "th-c");
      run.run(CLIENTS, GRANTS_PER_CLIENT, 2);
      System.out.printf("thrifty: %d sections, %d renewed (%d with node 2 frozen), %d renewals refused, "
          + "%d acquires again after UNAVAILABLE, %d releases UNAVAILABLE%n", run.checker.sections.get(),
          run.renewed.get(), run.renewedWhileFrozen.get(), run.renewalsRefused.get(), run.acquiresAgain.get(),
          run.releasesUnknown.get());
      assertThat(run.frozen).isTrue();
      assertThat(run.checker.sections.get()).isEqualTo(CLIENTS * GRANTS_PER_CLIENT);
      assertThat(run.checker.overlaps.get()).isZero();
      assertThat(run.checker.fenceViolations.get()).isZero();
      assertThat(run.renewedWhileFrozen.get()).as("renewals with node 2 frozen").isPositive();
    }
  }
}
