package dev.redlockd.it.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import org.junit.jupiter.api.Test;

/**
 * The lock holds under faults: 66 clients through 2 server processes on 5 redis-server
 * processes, and N + 3 workers on a semaphore of N permits beside them (at most N holders, one
 * per permit, fencing tokens rising per permit), while a nemesis freezes, kills, restarts and slows nodes, kills a server with
 * KeepAlive leases open and stops one with SIGTERM (a rolling restart's step). 60 s in the
 * suite; {@code -Dchaos.seconds=600} for the long run (see docs/reliability.md). The seed is printed first; {@code -Dchaos.seed} repeats a schedule.
 */
class ChaosIT {

  @Test
  void noOverlapNoStaleFenceNoGrantWithoutQuorumAndNothingLeftHeld() {
    ChaosConfig config = ChaosConfig.fromSystemProperties();
    // Set-up, heal, --max-ttl and the final checks take well under 3 minutes on top of the run.
    ChaosResult result = assertTimeoutPreemptively(config.duration().plusMinutes(3),
        () -> ChaosRun.run(config, System.out));
    String seed = "seed " + config.seed();

    assertThat(result.violations()).as(seed).isEmpty();
    assertThat(result.clientErrors()).as(seed).isEmpty();

    // A pass means something only if the run did what it claims to have done.
    assertThat(result.faults()).as("%s: every kind of fault was injected", seed)
        .allSatisfy((fault, times) -> assertThat(times).as(fault.name()).isPositive());
    assertThat(result.grantsByKind()).as("%s: every kind of client was granted locks", seed)
        .allSatisfy((kind, grants) -> assertThat(grants).as(kind.name()).isGreaterThanOrEqualTo(10));
    assertThat(result.figures().writesRefusedStale())
        .as("%s: fencing refused writes of holders paused past their lease", seed).isPositive();
    assertThat(result.figures().handoffAfterReplicaKillMs())
        .as("%s: a replica was killed while it kept leases alive, and those resources changed hands", seed)
        .isNotEmpty();
    assertThat(result.permitSections()).as("%s: the semaphore phase's workers held permits", seed)
        .isGreaterThanOrEqualTo(PermitWorkload.PERMITS + 1);
    assertThat(result.permitsAtOnce()).as("%s: the semaphore phase reached its bound, at most N at once", seed)
        .isEqualTo(PermitWorkload.PERMITS);
  }
}
