package dev.redlockd.election;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler whose clock moves only when the test says so, and whose tasks run only on the
 * test's thread, in due order: {@link #runDue()} runs what is due now, {@link #advance} moves
 * the clock and runs what falls due on the way.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
  private final PriorityQueue<Task<?>> queue = new PriorityQueue<>(
      Comparator.<Task<?>>comparingLong(t -> t.due).thenComparingLong(t -> t.order));
  private long now;
  private long order;
  private boolean shutdown;

  /** Runs every task due by now, those they schedule for now included. Returns how many ran. */
  int runDue() {
    int ran = 0;
    while (!queue.isEmpty() && queue.peek().due <= now) {
      queue.poll().run();
      ran++;
    }
    return ran;
  }

  /** Moves the clock by {@code nanos}, running each task as its time comes. */
  void advance(long nanos) {
    long until = now + nanos;
    while (!queue.isEmpty() && queue.peek().due <= until) {
      Task<?> next = queue.poll();
      now = Math.max(now, next.due);
      next.run();
    }
    now = until;
  }

  int pending() {
    return queue.size();
  }

  private <V> Task<V> add(Callable<V> body, long delayNanos, long periodNanos) {
    if (shutdown) {
      throw new java.util.concurrent.RejectedExecutionException("shut down");
    }
    Task<V> task = new Task<>(body, now + Math.max(0, delayNanos), periodNanos, order++);
    queue.add(task);
    return task;
  }

  @Override
  public void execute(Runnable command) {
    add(() -> {
      command.run();
      return null;
    }, 0, 0);
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return add(() -> {
      command.run();
      return null;
    }, unit.toNanos(delay), 0);
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    return add(callable, unit.toNanos(delay), 0);
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
    return scheduleWithFixedDelay(command, initialDelay, period, unit);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
    return add(() -> {
      command.run();
      return null;
    }, unit.toNanos(initialDelay), unit.toNanos(delay));
  }

  @Override
  public void shutdown() {
    shutdown = true;
  }

  @Override
  public List<Runnable> shutdownNow() {
    shutdown = true;
    List<Runnable> left = new ArrayList<>(queue);
    queue.clear();
    return left;
  }

  @Override
  public boolean isShutdown() {
    return shutdown;
  }

  @Override
  public boolean isTerminated() {
    return shutdown && queue.isEmpty();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return isTerminated();
  }

  private final class Task<V> implements ScheduledFuture<V>, Runnable {
    private final Callable<V> body;
    private final long period;
    private final long order;
    private long due;
    private boolean cancelled;
    private boolean done;

    Task(Callable<V> body, long due, long period, long order) {
      this.body = body;
      this.due = due;
      this.period = period;
      this.order = order;
    }

    @Override
    public void run() {
      if (cancelled) {
        return;
      }
      try {
        body.call();
      } catch (Exception e) {
        throw new AssertionError("a scheduled task failed", e);
      }
      if (period > 0 && !cancelled) {
        due = now + period;
        queue.add(this);
      } else {
        done = true;
      }
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(due - now, TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed other) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      cancelled = true;
      queue.remove(this);
      return !done;
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public boolean isDone() {
      return done || cancelled;
    }

    @Override
    public V get() {
      throw new UnsupportedOperationException("not for tests that run on one thread");
    }

    @Override
    public V get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException("not for tests that run on one thread");
    }
  }
}
