package dev.redlockd.bench;

import io.grpc.Status;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleUnaryOperator;

/**
 * Lock cycles started at a rate of their own, whatever the answers take (an open loop: a slow
 * server is sent as much as a fast one), each on a resource of its own. Ticks every millisecond
 * and starts the cycles due by then: {@code due(t)} cycles after t seconds.
 */
final class OpenRate {
  /** How long the cycles of a stretch may take to end after it, before they count as failed. */
  private static final long DRAIN_SECONDS = 15;

  private OpenRate() {}

  /**
   * What a stretch did: cycles started, the ones that ended well within it ({@code done}, what
   * the rate is counted from), and the ones that failed, by gRPC status code (a cycle still
   * running {@link #DRAIN_SECONDS} after the stretch counts as "unfinished").
   */
  record Outcome(double seconds, long sent, long done, Map<String, Long> failed) {
    double rate() {
      return done / seconds;
    }

    long failures() {
      return failed.values().stream().mapToLong(Long::longValue).sum();
    }

    String failuresText() {
      return failures() == 0 ? "0" : failures() + " " + failed;
    }
  }

  /** From {@code from} to {@code to} cycles/s, rising evenly over {@code seconds}. */
  static Outcome ramp(Contender cycles, int from, int to, int seconds) throws InterruptedException {
    double slope = (to - from) / (double) Math.max(1, seconds);
    return run(cycles, seconds, t -> from * t + slope * t * t / 2, () -> {});
  }

  /** {@code rate} cycles/s for {@code seconds}; {@code atEnd} runs when the last is started, before any wait for answers. */
  static Outcome steady(Contender cycles, int rate, int seconds, Runnable atEnd) throws InterruptedException {
    return run(cycles, seconds, t -> rate * t, atEnd);
  }

  private static Outcome run(Contender cycles, int seconds, DoubleUnaryOperator due, Runnable atEnd)
      throws InterruptedException {
    String run = Long.toString(System.nanoTime(), 36); // each stretch's resources are its own
    AtomicLong sent = new AtomicLong();
    AtomicLong done = new AtomicLong();
    AtomicLong ended = new AtomicLong();
    Map<String, AtomicLong> failed = new ConcurrentHashMap<>();
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(seconds);
    ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();
    ticks.scheduleAtFixedRate(() -> {
      long now = Math.min(System.nanoTime(), end);
      long dueNow = (long) due.applyAsDouble((now - start) / 1e9);
      while (sent.get() < dueNow) {
        long k = sent.getAndIncrement();
        cycles.cycle("ns:" + run + ":" + k).whenComplete((ok, e) -> {
          if (e == null) {
            if (System.nanoTime() - end <= 0) {
              done.incrementAndGet();
            }
          } else {
            failed.computeIfAbsent(Status.fromThrowable(e).getCode().name(), c -> new AtomicLong()).incrementAndGet();
          }
          ended.incrementAndGet();
        });
      }
    }, 0, 1, TimeUnit.MILLISECONDS);
    TimeUnit.NANOSECONDS.sleep(end - System.nanoTime());
    ticks.shutdownNow();
    ticks.awaitTermination(5, TimeUnit.SECONDS);
    double elapsed = (System.nanoTime() - start) / 1e9;
    atEnd.run();
    long drainUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS);
    while (ended.get() < sent.get() && System.nanoTime() - drainUntil < 0) {
      TimeUnit.MILLISECONDS.sleep(10);
    }
    Map<String, Long> failures = new TreeMap<>();
    failed.forEach((code, count) -> failures.put(code, count.get()));
    if (ended.get() < sent.get()) {
      failures.put("unfinished", sent.get() - ended.get());
    }
    return new Outcome(Math.min(elapsed, seconds), sent.get(), done.get(), failures);
  }
}
