package dev.redlockd.client;

import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Keeps a channel trying the replicas it finds down every {@link #INTERVAL} for a while after a
 * kept stream lost its replica (rule 21), where grpc-java offers no setting for the reconnect
 * backoff (1 s growing to minutes). round_robin picks only a connected replica: a reset when the
 * next stream needs a new home starts a connection too late for that stream, so under a rolling
 * restart paced by readiness the streams moved by each restart piled onto the replicas already
 * connected, hardly any onto the one just restarted (issue 40).
 * Tried every 100 ms, a replica is connected within about that of serving again.
 *
 * <p>For {@link #WINDOW} after the last loss: longer than a replica takes to restart (a JVM's
 * start, seconds), and not for ever, since each reset also asks the name resolver again. A reset
 * leaves connected and connecting replicas alone.
 */
final class EagerReconnect {
  static final Duration INTERVAL = Duration.ofMillis(100);
  static final Duration WINDOW = Duration.ofMinutes(1);

  private final ManagedChannel channel;
  private final ScheduledExecutorService scheduler;
  private final LongSupplier nanoClock;
  private long untilNanos; // guarded by this
  private ScheduledFuture<?> resets; // guarded by this

  EagerReconnect(ManagedChannel channel, ScheduledExecutorService scheduler, LongSupplier nanoClock) {
    this.channel = channel;
    this.scheduler = scheduler;
    this.nanoClock = nanoClock;
  }

  /** A kept stream lost its replica: reconnect now, and every {@link #INTERVAL} for the {@link #WINDOW} after. */
  void replicaLost() {
    channel.resetConnectBackoff();
    synchronized (this) {
      untilNanos = nanoClock.getAsLong() + WINDOW.toNanos();
      if (resets == null) {
        long every = INTERVAL.toNanos();
        resets = scheduler.scheduleWithFixedDelay(this::reset, every, every, TimeUnit.NANOSECONDS);
      }
    }
  }

  private void reset() {
    synchronized (this) {
      if (resets == null) {
        return;
      }
      if (nanoClock.getAsLong() - untilNanos >= 0) {
        resets.cancel(false);
        resets = null;
        return;
      }
    }
    channel.resetConnectBackoff();
  }
}
