package dev.redlockd.sim;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One engine replica's scheduler and clock on the simulation's loop. The replica's clock runs
 * at its own rate (clock drift): a delay it asks for is measured on its clock. A task that
 * throws is reported to {@code crashes}: the engine must never let one escape.
 */
final class SimExecutor extends AbstractExecutorService implements ScheduledExecutorService {
  private final SimLoop loop;
  private final double rate;
  private final long offset;
  private final Consumer<Throwable> crashes;

  SimExecutor(SimLoop loop, double rate, long offset, Consumer<Throwable> crashes) {
    this.loop = loop;
    this.rate = rate;
    this.offset = offset;
    this.crashes = crashes;
  }

  /** This replica's System.nanoTime(). */
  LongSupplier nanoClock() {
    return () -> offset + (long) (loop.now() * rate);
  }

  private long globalDelay(long localNanos) {
    return (long) Math.ceil(Math.max(0, localNanos) / rate);
  }

  private void run(Runnable task) {
    try {
      task.run();
    } catch (Throwable t) {
      crashes.accept(t);
    }
  }

  @Override
  public void execute(Runnable command) {
    loop.after(0, () -> run(command));
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return schedule(() -> {
      command.run();
      return null;
    }, delay, unit);
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    Task<V> task = new Task<>();
    task.event = loop.after(globalDelay(unit.toNanos(delay)), () -> {
      try {
        task.result.complete(callable.call());
      } catch (Throwable t) {
        task.result.completeExceptionally(t);
        crashes.accept(t);
      }
    });
    return task;
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
    return scheduleWithFixedDelay(command, initialDelay, period, unit);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
    Task<Object> task = new Task<>();
    long every = globalDelay(unit.toNanos(delay));
    Runnable[] tick = new Runnable[1];
    tick[0] = () -> {
      run(command);
      if (!task.isCancelled()) {
        task.event = loop.after(every, tick[0]);
      }
    };
    task.event = loop.after(globalDelay(unit.toNanos(initialDelay)), tick[0]);
    return task;
  }

  /** A scheduled task's handle; waiting on it would stop the simulation, so get() refuses. */
  private final class Task<V> implements ScheduledFuture<V> {
    SimLoop.Event event;
    final CompletableFuture<V> result = new CompletableFuture<>();

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert((long) ((event.at - loop.now()) * rate), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = event.cancel();
      if (cancelled) {
        result.cancel(false);
      }
      return cancelled;
    }

    @Override
    public boolean isCancelled() {
      return event.cancelled();
    }

    @Override
    public boolean isDone() {
      return event.done();
    }

    @Override
    public V get() throws InterruptedException, ExecutionException {
      if (!result.isDone()) {
        throw new IllegalStateException("a simulated task cannot be waited for");
      }
      return result.get();
    }

    @Override
    public V get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException {
      return get();
    }
  }

  @Override
  public void shutdown() {}

  @Override
  public List<Runnable> shutdownNow() {
    return List.of();
  }

  @Override
  public boolean isShutdown() {
    return false;
  }

  @Override
  public boolean isTerminated() {
    return false;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return true;
  }
}
