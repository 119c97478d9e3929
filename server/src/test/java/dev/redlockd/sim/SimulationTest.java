package dev.redlockd.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Seeded simulations of the real engine over simulated nodes (see {@link Simulation}), until
 * {@code sim.operations} lock operations have run (from seed {@code sim.seed} on), or exactly
 * {@code sim.seeds} seeds when that is given. Each seed runs alone on one thread, so a seed
 * replays the same run; seeds run side by side, one per core.
 */
@Tag("cpu-bound") // run alone, after the other classes (server/pom.xml)
class SimulationTest {
  @Test
  void seeds() throws Exception {
    long first = Long.getLong("sim.seed", 1);
    Long fixedSeeds = Long.getLong("sim.seeds");
    long wanted = fixedSeeds != null ? Long.MAX_VALUE : Long.getLong("sim.operations", 1_000_000);
    long lastSeed = fixedSeeds != null ? first + fixedSeeds - 1 : Long.MAX_VALUE;
    int threads = Runtime.getRuntime().availableProcessors();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long started = System.nanoTime();
    long operations = 0;
    long seeds = 0;
    int violations = 0;
    StringBuilder report = new StringBuilder();
    try {
      long next = first;
      List<Future<Simulation.Result>> running = new ArrayList<>();
      while (true) {
        while (running.size() < threads && next <= lastSeed && operations < wanted) {
          long seed = next++;
          running.add(pool.submit(() -> new Simulation(seed).run()));
        }
        if (running.isEmpty()) {
          break;
        }
        Simulation.Result result = running.remove(0).get();
        seeds++;
        operations += result.operations();
        violations += result.violations().size();
        if (!result.violations().isEmpty()) {
          report.append("seed ").append(result.seed()).append(": ").append(result.violations().size())
              .append(" violations, first: ").append(result.violations().get(0)).append('\n')
              .append(result.trace()).append('\n');
        }
      }
    } finally {
      pool.shutdownNow();
    }
    System.out.printf("simulation: %d operations over %d seeds, %d violations%n", operations, seeds, violations);
    System.out.printf("(seeds %d to %d, %d threads, %.1f s)%n", first, first + seeds - 1, threads,
        (System.nanoTime() - started) / 1e9);
    assertThat(report.toString()).isEmpty();
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
