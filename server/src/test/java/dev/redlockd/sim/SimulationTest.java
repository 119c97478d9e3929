package dev.redlockd.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Seeded simulations of the real engine over simulated nodes; see {@link Simulation}. */
class SimulationTest {
  @Test
  void seeds() {
    long seeds = Long.getLong("sim.seeds", 40);
    long first = Long.getLong("sim.seed", 1);
    long operations = 0;
    int violations = 0;
    StringBuilder report = new StringBuilder();
    for (long seed = first; seed < first + seeds; seed++) {
      long t0 = System.nanoTime();
      Simulation.Result result = new Simulation(seed).run();
      operations += result.operations();
      violations += result.violations().size();
      System.out.printf("seed %d: %d operations, %d events, %d violations, %d ms%n", seed, result.operations(),
          result.events(), result.violations().size(), (System.nanoTime() - t0) / 1_000_000);
      if (!result.violations().isEmpty()) {
        report.append("seed ").append(seed).append(": ").append(result.violations().size())
            .append(" violations, first: ").append(result.violations().get(0)).append('\n')
            .append(result.trace()).append('\n');
      }
    }
    System.out.printf("simulation: %d operations over %d seeds, %d violations%n", operations, seeds, violations);
    assertThat(report.toString()).isEmpty();
  }
}
