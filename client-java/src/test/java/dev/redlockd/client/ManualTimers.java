package dev.redlockd.client;

import java.time.Duration;
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
 * The client's clock and timers, moved by the test: {@link #advance} moves the clock and runs,
 * on the test's thread and in due order, each task that falls due on the way (those they
 * schedule too). Tasks may be scheduled from any thread (gRPC's, when an answer arrives), so the
 * queue is guarded; a task runs outside that guard.
 */
final class ManualTimers extends AbstractExecutorService implements ScheduledExecutorService {
  private final Object lock = new Object();
  private final PriorityQueue<Task<?>> queue = new PriorityQueue<>(
      Comparator.<Task<?>>comparingLong(t -> t.due).thenComparingLong(t -> t.order)); // guarded by lock
  private volatile long now = 1_000_000_000L;
  private long order; // guarded by lock

  long nanoTime() {
    return now;
  }

  /** Moves the clock by {@code d}, running each task as its time comes. */
  void advance(Duration d) {
    long until = now + d.toNanos();
    while (true) {
      Task<?> next;
      synchronized (lock) {
        next = queue.peek();
        if (next == null || next.due > until) {
          break;
        }
        queue.poll();
        now = Math.max(now, next.due);
      }
      next.run();
    }
    now = until;
  }

  private <V> Task<V> add(Callable<V> body, long delayNanos, long periodNanos) {
    synchronized (lock) {
      Task<V> task = new Task<>(body, now + Math.max(0, delayNanos), periodNanos, order++);
      queue.add(task);
      return task;
    }
  }

  @Override
  public void execute(Runnable command) {
    schedule(command, 0, TimeUnit.NANOSECONDS);
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
  public void shutdown() {}

  @Override
  public List<Runnable> shutdownNow() {
    synchronized (lock) {
      List<Runnable> left = new ArrayList<>(queue);
      queue.clear();
      return left;
    }
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
    return false;
  }

  private final class Task<V> implements ScheduledFuture<V>, Runnable {
    private final Callable<V> body;
    private final long period;
    private final long order;
    private volatile long due;
    private volatile boolean cancelled;
    private volatile boolean done;

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
      synchronized (lock) {
        if (period > 0 && !cancelled) {
          due = now + period;
          queue.add(this);
        } else {
          done = true;
        }
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
      synchronized (lock) {
        cancelled = true;
        queue.remove(this);
        return !done;
      }
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
      throw new UnsupportedOperationException("the test drives these timers");
    }

    @Override
    public V get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException("the test drives these timers");
    }
  }
}
