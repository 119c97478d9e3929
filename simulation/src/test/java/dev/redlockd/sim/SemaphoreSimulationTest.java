package dev.redlockd.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The semaphore workload of the simulation ({@link SemSimulation}): the real engine's permits
 * keep at most N holders valid at once under the faults, over {@code sem.operations}
 * operations from seed {@code sem.seed} on (or exactly {@code sem.seeds} seeds), and with
 * thrifty rounds (each permit's rounds ask a quorum of nodes first) over
 * {@code sem.operations.thrifty} operations, a shorter run for the suite's time; the naive
 * design (per-node counts, majority admission; {@link NaiveSemaphore}) is caught exceeding its
 * bound with every node at or under it.
 */
class SemaphoreSimulationTest {
  @Test
  void permitsNeverExceedTheirLimit() throws Exception {
    run(SemSimulation.ENGINE, "", Long.getLong("sem.operations", 30_000));
  }

  @Test
  void thriftyPermitsNeverExceedTheirLimit() throws Exception {
    run(SemSimulation.THRIFTY, " (thrifty)", Long.getLong("sem.operations.thrifty", 1_000));
  }

  /** Seven nodes, each semaphore's permits on the five of its name's set. */
  @Test
  void scaledOutPermitsNeverExceedTheirLimit() throws Exception {
    run(SemSimulation.SCALED_OUT, " (7 nodes, 5 per semaphore)", Long.getLong("sem.operations.scaled", 5_000));
  }

  private static void run(SemSimulation.Implementation implementation, String what, long operationsWanted)
      throws Exception {
    long first = Long.getLong("sem.seed", 1);
    long started = System.nanoTime();
    List<SemSimulation.Result> results = SeedRuns.run(first, Long.getLong("sem.seeds"), operationsWanted,
        seed -> new SemSimulation(seed, implementation).run(), SemSimulation.Result::operations);
    long operations = 0;
    long grants = 0;
    long full = 0;
    long seeds = results.size();
    int violations = 0;
    int threads = SeedRuns.threads();
    StringBuilder report = new StringBuilder();
    for (SemSimulation.Result result : results) {
      operations += result.operations();
      grants += result.grants();
      full += result.full();
      violations += result.violations().size();
      if (!result.violations().isEmpty()) {
        report.append("seed ").append(result.seed()).append(": ").append(result.violations().size())
            .append(" violations, first: ").append(result.violations().get(0)).append('\n')
            .append(result.trace()).append('\n');
      }
    }
    System.out.printf("semaphore simulation%s: %d operations (%d grants, %d at the limit) over %d seeds, "
        + "%d violations%n", what, operations, grants, full, seeds, violations);
    System.out.printf("(seeds %d to %d, %d threads, %.1f s)%n", first, first + seeds - 1, threads,
        (System.nanoTime() - started) / 1e9);
    assertThat(report.toString()).isEmpty();
    assertThat(full).as("grants and renewals that left N holders valid at once").isPositive();
  }

  @Test
  void theNaiveMajorityCountIsCaught() {
    long first = Long.getLong("sem.naive.seed", 1);
    int budget = 20;
    long operations = 0;
    for (long seed = first; seed < first + budget; seed++) {
      SemSimulation.Result result = new SemSimulation(seed, SemSimulation.NAIVE).run();
      operations += result.operations();
      System.out.printf("naive seed %d: %d operations, %d grants, %d violations, %d with no node over its limit%n",
          seed, result.operations(), result.grants(), result.violations().size(), result.naiveFlaws());
      if (result.naiveFlaws() > 0) {
        System.out.println("caught after " + operations + " operations: " + result.violations().get(0));
        return;
      }
    }
    throw new AssertionError("the naive semaphore was not caught in " + budget + " seeds (" + operations + " operations)");
  }

  @Test
  void aSeedReplaysTheSameRun() {
    SemSimulation.Result once = new SemSimulation(7, SemSimulation.ENGINE).run();
    SemSimulation.Result again = new SemSimulation(7, SemSimulation.ENGINE).run();
    assertThat(once.grants()).isPositive();
    assertThat(again.operations()).isEqualTo(once.operations());
    assertThat(again.grants()).isEqualTo(once.grants());
  }
}
