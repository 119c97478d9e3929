package dev.redlockd.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The semaphore workload of the simulation ({@link SemSimulation}): the naive design (per-node
 * counts, majority admission; {@link NaiveSemaphore}) must be caught exceeding its bound with
 * every node at or under it.
 */
class SemaphoreSimulationTest {
  private static final SemSimulation.Implementation NAIVE = new SemSimulation.Implementation() {
    @Override
    public SimSemaphore replica(SimLoop loop, List<dev.redlockd.node.RedisNode> links, SimExecutor executor,
        Random random, SimChecker checker) {
      return new NaiveSemaphore(loop, links, Simulation.config(), random);
    }

    @Override
    public boolean restarts() {
      return false;
    }
  };

  @Test
  void theNaiveMajorityCountIsCaught() {
    long first = Long.getLong("sim.seed", 1);
    int budget = 20;
    long operations = 0;
    for (long seed = first; seed < first + budget; seed++) {
      SemSimulation.Result result = new SemSimulation(seed, NAIVE).run();
      operations += result.operations();
      System.out.printf("naive seed %d: %d operations, %d grants, %d violations, %d with no node over its limit%n",
          seed, result.operations(), result.grants(), result.violations().size(), result.naiveFlaws());
      if (result.naiveFlaws() > 0) {
        System.out.println(result.violations().get(0));
        System.out.println(result.trace());
        return;
      }
    }
    throw new AssertionError("the naive semaphore was not caught in " + budget + " seeds (" + operations + " operations)");
  }
}
