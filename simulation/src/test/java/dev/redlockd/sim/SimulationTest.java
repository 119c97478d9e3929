package dev.redlockd.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Seeded simulations of the real engine over simulated nodes (see {@link Simulation}), until
 * {@code sim.operations} lock operations have run (from seed {@code sim.seed} on), or exactly
 * {@code sim.seeds} seeds when that is given. Each seed runs alone on one thread, so a seed
 * replays the same run; seeds run side by side, one per core. The long run is of the engine as it
 * runs by default (every node in every round): 120,000 operations in the suite, whose time we
 * hold to 10 minutes on 2 cores; the million-operation soak is {@code -Dsim.operations=1000000
 * -Dtest=SimulationTest#seeds}. A shorter one, of {@code sim.operations.thrifty}
 * operations (50,000 in the suite), of thrifty rounds (--thrifty-rounds, off by default). Its
 * million-operation run is {@code -Dsim.operations.thrifty=1000000 -Dtest=SimulationTest#thriftySeeds}:
 * when thrifty rounds become the default, the two runs trade places. A third, of
 * {@code sim.operations.scaled} operations (30,000 in the suite: an operation costs about five
 * times what it costs over three or five nodes), runs nine nodes with each resource on five
 * ({@link Simulation#scaledOut}), thrifty on even seeds and every node of the set on odd ones; its
 * million-operation run is {@code -Dsim.operations.scaled=1000000 -Dtest=SimulationTest#scaledOutSeeds}.
 */
class SimulationTest {
  @Test
  void seeds() throws Exception {
    run("", Long.getLong("sim.operations", 120_000), seed -> new Simulation(seed, false));
  }

  @Test
  void thriftySeeds() throws Exception {
    run(" (thrifty)", Long.getLong("sim.operations.thrifty", 50_000), seed -> new Simulation(seed, true));
  }

  @Test
  void scaledOutSeeds() throws Exception {
    run(" (9 nodes, 5 per resource)", Long.getLong("sim.operations.scaled", 30_000),
        seed -> Simulation.scaledOut(seed, seed % 2 == 0));
  }

  /**
   * Membership changes (add, remove, replace a node of nine, each resource on five) through the
   * joint step, under the usual faults. The suite runs {@code sim.operations.membership} (12,000);
   * the million-operation run is
   * {@code -Dsim.operations.membership=1000000 -Dtest=SimulationTest#membershipChangeSeeds}.
   */
  @Test
  void membershipChangeSeeds() throws Exception {
    run(" (membership change, 9 nodes, 5 per resource)", Long.getLong("sim.operations.membership", 12_000),
        Simulation::membershipChange);
  }

  /** Replicas that go from OLD alone to NEW alone with no joint step: caught within the budget of seeds. */
  @Test
  void aChangeThatSkipsTheJointStepIsCaught() {
    caught("a membership change without the joint step", Simulation::skippingTheJointStep, 20);
  }

  private static void run(String kind, long operationsWanted, java.util.function.LongFunction<Simulation> simulation)
      throws Exception {
    long first = Long.getLong("sim.seed", 1);
    long started = System.nanoTime();
    List<Simulation.Result> results = SeedRuns.run(first, Long.getLong("sim.seeds"), operationsWanted,
        seed -> simulation.apply(seed).run(), Simulation.Result::operations);
    long operations = 0;
    long seeds = results.size();
    int violations = 0;
    int threads = SeedRuns.threads();
    StringBuilder report = new StringBuilder();
    for (Simulation.Result result : results) {
      operations += result.operations();
      violations += result.violations().size();
      if (!result.violations().isEmpty()) {
        report.append("seed ").append(result.seed()).append(": ").append(result.violations().size())
            .append(" violations, first: ").append(result.violations().get(0)).append('\n')
            .append(result.trace()).append('\n');
      }
    }
    System.out.printf("simulation%s: %d operations over %d seeds, %d violations%n", kind, operations, seeds,
        violations);
    System.out.printf("(seeds %d to %d, %d threads, %.1f s)%n", first, first + seeds - 1, threads,
        (System.nanoTime() - started) / 1e9);
    assertThat(report.toString()).isEmpty();
  }

  /**
   * The suite's runs from seed 1 on, with nodes that hide their clock steps from TIME (keys
   * still expire by the stepped clock), so that the engine never sees one: two holders valid at
   * once, within the budget of seeds. A step frees a lock only on the node that stepped, so it
   * takes a holder on exactly a quorum that includes that node, and a competitor within the
   * holder's validity: about one seed in twelve has one.
   */
  @Test
  void anEngineBlindToClockStepsIsCaught() {
    long first = Long.getLong("sim.blind.seed", 1);
    int budget = 60;
    long operations = 0;
    for (long seed = first; seed < first + budget; seed++) {
      Simulation.Result result = Simulation.blindToClockSteps(seed).run();
      operations += result.operations();
      java.util.Optional<String> overlap = result.violations().stream()
          .filter(v -> v.contains(" valid while ")).findFirst();
      if (overlap.isPresent()) {
        System.out.printf("blind to clock steps: caught in seed %d after %d operations: %s%n", seed, operations,
            overlap.get());
        return;
      }
    }
    throw new AssertionError("an engine blind to clock steps was not caught in " + budget + " seeds ("
        + operations + " operations)");
  }

  /** A grant that stands on one vote short of a quorum: caught within the budget of seeds. */
  @Test
  void aGrantOneVoteShortIsCaught() {
    caught("a grant one vote short", Simulation::grantingOneVoteShort, 10);
  }

  /** A renewal that counts a node holding another token's lock as restored: caught within the budget of seeds. */
  @Test
  void aRestoreOnAnotherTokenIsCaught() {
    caught("a restore on another token", Simulation::restoringOnAnotherToken, 40);
  }

  /**
   * Replicas that name the nodes by their places in lists written in different orders, so that
   * they put one resource on different sets: caught within the budget of seeds.
   */
  @Test
  void idsFromPlacesAreCaught() {
    caught("node ids from list places", Simulation::idsFromPlaces, 10);
  }

  private static void caught(String mutant, java.util.function.LongFunction<Simulation> run, int budget) {
    long operations = 0;
    for (long seed = 1; seed <= budget; seed++) {
      Simulation.Result result = run.apply(seed).run();
      operations += result.operations();
      if (!result.violations().isEmpty()) {
        System.out.printf("%s: caught in seed %d after %d operations: %s%n", mutant, seed, operations,
            result.violations().get(0));
        return;
      }
    }
    throw new AssertionError(mutant + " was not caught in " + budget + " seeds (" + operations + " operations)");
  }

  @Test
  void aSeedReplaysTheSameRun() {
    Simulation.Result once = new Simulation(7).run();
    Simulation.Result again = new Simulation(7).run();
    assertThat(once.operations()).isPositive();
    assertThat(again.operations()).isEqualTo(once.operations());
    assertThat(again.events()).isEqualTo(once.events());
  }
}
