package dev.redlockd.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongFunction;
import java.util.function.ToLongFunction;

/**
 * A simulation run over consecutive seeds on every core: a given number of seeds, or as many as
 * it takes to reach a number of operations. The results come back in seed order, so the seeds
 * run depend on the counts alone, never on which seed finished first.
 */
final class SeedRuns {
  private SeedRuns() {}

  static int threads() {
    return Runtime.getRuntime().availableProcessors();
  }

  /**
   * {@code simulate}'s results for seeds {@code first}, {@code first + 1}, ...: {@code seeds} of
   * them if that is not null, else until {@code operationsOf} them adds up to
   * {@code operationsWanted}.
   */
  static <R> List<R> run(long first, Long seeds, long operationsWanted, LongFunction<R> simulate,
      ToLongFunction<R> operationsOf) throws Exception {
    long wanted = seeds != null ? Long.MAX_VALUE : operationsWanted;
    long lastSeed = seeds != null ? first + seeds - 1 : Long.MAX_VALUE;
    int threads = threads();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<R> results = new ArrayList<>();
    long operations = 0;
    try {
      long next = first;
      Deque<Future<R>> running = new ArrayDeque<>();
      while (true) {
        // Up to twice as many seeds in flight as threads: a thread whose seed ended before the
        // oldest one's takes the next from the pool's queue instead of waiting for it (seeds
        // differ in length), while the results are still taken in seed order. No more than the
        // operations still wanted call for, at the seeds' mean so far (one per thread at first):
        // a short run is not stretched by seeds it does not need.
        while (next <= lastSeed && operations < wanted && running.size() < 2 * threads
            && (results.isEmpty() ? running.size() < threads
                : operations + running.size() * (operations / results.size()) < wanted)) {
          long seed = next++;
          running.add(pool.submit(() -> simulate.apply(seed)));
        }
        if (running.isEmpty()) {
          return results;
        }
        R result = running.removeFirst().get();
        results.add(result);
        operations += operationsOf.applyAsLong(result);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
