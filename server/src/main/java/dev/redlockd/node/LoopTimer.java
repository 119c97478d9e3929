package dev.redlockd.node;

import io.netty.channel.EventLoop;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lettuce's command timeouts, run on the {@link RedisIo} loops. Its own timer is a wheel that
 * ticks every 100 ms on a thread of its own: far coarser than a 50 ms node timeout. A timeout
 * set from an I/O thread (where the engine's calls are made) runs on that same thread.
 */
final class LoopTimer implements Timer {
  private static final Logger log = LoggerFactory.getLogger(LoopTimer.class);

  private final List<EventLoop> loops;

  LoopTimer(RedisIo io) {
    this.loops = io.loops();
  }

  @Override
  public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
    LoopTimeout timeout = new LoopTimeout(task);
    timeout.scheduled = loop().schedule(timeout, delay, unit);
    return timeout;
  }

  private EventLoop loop() {
    for (EventLoop loop : loops) {
      if (loop.inEventLoop()) {
        return loop;
      }
    }
    return loops.get(Math.floorMod(Long.hashCode(Thread.currentThread().getId()), loops.size()));
  }

  /** The loops are RedisIo's: nothing here to stop. */
  @Override
  public Set<Timeout> stop() {
    return Set.of();
  }

  private final class LoopTimeout implements Timeout, Runnable {
    private final TimerTask task;
    private volatile ScheduledFuture<?> scheduled; // null for the moment between schedule and its return
    private volatile boolean cancelled;
    private volatile boolean expired;

    LoopTimeout(TimerTask task) {
      this.task = task;
    }

    @Override
    public void run() {
      if (cancelled) {
        return;
      }
      expired = true;
      try {
        task.run(this);
      } catch (Throwable t) {
        log.warn("A Lettuce timer task failed", t);
      }
    }

    @Override
    public Timer timer() {
      return LoopTimer.this;
    }

    @Override
    public TimerTask task() {
      return task;
    }

    @Override
    public boolean isExpired() {
      return expired;
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public boolean cancel() {
      if (expired) {
        return false;
      }
      cancelled = true;
      ScheduledFuture<?> s = scheduled;
      if (s != null) {
        s.cancel(false);
      }
      return true;
    }
  }
}
