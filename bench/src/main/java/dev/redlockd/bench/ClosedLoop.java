package dev.redlockd.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Keeps exactly N cycles in flight against one contender: each finished cycle starts the next
 * one on the same resource, so the load adapts to the system instead of queueing behind it
 * (a closed loop; an open loop at a fixed rate would measure queueing once it saturates).
 */
final class ClosedLoop {
  /** A failing system must not turn the loop into a busy spin on two cores. */
  private static final Executor AFTER_ERROR = CompletableFuture.delayedExecutor(10, TimeUnit.MILLISECONDS);

  private final Contender contender;
  private final int inFlight;
  private final List<String> resources = new ArrayList<>();
  private final Latencies latencies = new Latencies();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicReference<Throwable> firstError = new AtomicReference<>();
  private final CountDownLatch stopped;
  private volatile boolean recording;
  private volatile boolean running = true;

  private ClosedLoop(Contender contender, int inFlight, String runId) {
    this.contender = contender;
    this.inFlight = inFlight;
    this.stopped = new CountDownLatch(inFlight);
    for (int slot = 0; slot < inFlight; slot++) {
      // One resource per slot, reused cycle after cycle with a fresh token: names that never
      // repeat would leave one fencing counter per cycle behind in Redis.
      resources.add("lc:" + runId + ":" + inFlight + ":" + slot);
    }
  }

  record Point(String system, int inFlight, double seconds, Latencies.Sorted latencies, long errors,
      String firstError, CpuProbe.Usage cpu) {
    double cyclesPerSecond() {
      return latencies.count() / seconds;
    }
  }

  static Point run(Contender contender, int inFlight, Duration warmUp, Duration measure, String runId, CpuProbe cpu)
      throws InterruptedException {
    return new ClosedLoop(contender, inFlight, runId).run(warmUp, measure, cpu);
  }

  private Point run(Duration warmUp, Duration measure, CpuProbe cpu) throws InterruptedException {
    for (int slot = 0; slot < inFlight; slot++) {
      String resource = resources.get(slot);
      if (contender.blocking()) {
        Thread t = new Thread(() -> blockingLoop(resource), contender.name() + "-" + slot);
        t.setDaemon(true);
        t.start();
      } else {
        asyncLoop(resource);
      }
    }
    TimeUnit.NANOSECONDS.sleep(warmUp.toNanos());
    CpuProbe.Snapshot cpuBefore = cpu.snapshot();
    long start = System.nanoTime();
    recording = true;
    TimeUnit.NANOSECONDS.sleep(measure.toNanos());
    recording = false;
    long end = System.nanoTime();
    CpuProbe.Snapshot cpuAfter = cpu.snapshot();
    running = false;
    if (!stopped.await(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException(contender.name() + ": cycles still in flight 30 s after the point ended");
    }
    Throwable first = firstError.get();
    return new Point(contender.name(), inFlight, (end - start) / 1e9, latencies.sorted(), errors.get(),
        first == null ? null : describe(first), cpu.between(cpuBefore, cpuAfter));
  }

  private void blockingLoop(String resource) {
    try {
      while (running) {
        long start = System.nanoTime();
        try {
          contender.cycle(resource).join();
          finished(start, null);
        } catch (RuntimeException e) {
          finished(start, e);
          sleepQuietly();
        }
      }
    } finally {
      stopped.countDown();
    }
  }

  private void asyncLoop(String resource) {
    while (running) {
      long start = System.nanoTime();
      CompletableFuture<Void> cycle;
      try {
        cycle = contender.cycle(resource);
      } catch (RuntimeException e) {
        cycle = CompletableFuture.failedFuture(e);
      }
      if (!cycle.isDone()) {
        cycle.whenComplete((ok, error) -> {
          finished(start, error);
          if (error == null) {
            asyncLoop(resource);
          } else {
            AFTER_ERROR.execute(() -> asyncLoop(resource));
          }
        });
        return;
      }
      // Already complete on this thread: loop rather than recurse, one stack frame per cycle
      // would add up.
      Throwable error = cycle.handle((ok, e) -> e).join();
      finished(start, error);
      if (error != null) {
        AFTER_ERROR.execute(() -> asyncLoop(resource));
        return;
      }
    }
    stopped.countDown();
  }

  private void finished(long start, Throwable error) {
    long end = System.nanoTime();
    if (!recording) {
      return;
    }
    if (error == null) {
      latencies.add(end - start);
    } else {
      errors.incrementAndGet();
      firstError.compareAndSet(null, error);
    }
  }

  private static String describe(Throwable t) {
    Throwable cause = t;
    while ((cause instanceof java.util.concurrent.CompletionException
        || cause instanceof java.util.concurrent.ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    String message = cause.getClass().getSimpleName() + ": " + cause.getMessage();
    return message.length() > 200 ? message.substring(0, 200) + "..." : message;
  }

  private static void sleepQuietly() {
    try {
      Thread.sleep(10);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
