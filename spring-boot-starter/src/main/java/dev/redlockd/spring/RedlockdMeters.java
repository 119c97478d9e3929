package dev.redlockd.spring;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;

/**
 * The lock registry's meters:
 * <ul>
 *   <li>{@code redlockd.lock.acquisitions} (timer, tag {@code outcome}: acquired, not_acquired,
 *       failed): each acquisition that reached the service, timed from the call to its end, so
 *       the time is the wait;
 *   <li>{@code redlockd.lock.held} (gauge): locks held with a kept lease now;
 *   <li>{@code redlockd.lock.losses} (counter): leases lost while held.
 * </ul>
 * Bound to every registry Spring Boot's metrics support makes; before that (or without it) it
 * counts nothing.
 */
public final class RedlockdMeters implements MeterBinder, RedlockdLockListener {
  private final RedlockdLockRegistry locks;
  private volatile Timer acquired;
  private volatile Timer notAcquired;
  private volatile Timer failed;
  private volatile Counter losses;

  /** Listens to {@code locks} from now on; null (the application has a LockRegistry of its own): no meters. */
  public RedlockdMeters(RedlockdLockRegistry locks) {
    this.locks = locks;
    if (locks != null) {
      locks.addListener(this);
    }
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    if (locks == null) {
      return;
    }
    acquired = timer(registry, "acquired");
    notAcquired = timer(registry, "not_acquired");
    failed = timer(registry, "failed");
    losses = Counter.builder("redlockd.lock.losses")
        .description("Leases of held locks that were lost (the holder's next call on the lock throws)")
        .register(registry);
    Gauge.builder("redlockd.lock.held", locks, RedlockdLockRegistry::heldLocks)
        .description("Locks held now by threads of this application, each with a kept lease")
        .register(registry);
  }

  private static Timer timer(MeterRegistry registry, String outcome) {
    return Timer.builder("redlockd.lock.acquisitions")
        .description("Lock acquisitions that reached the service, by outcome; the time is the wait")
        .tag("outcome", outcome)
        .register(registry);
  }

  @Override
  public void acquired(String lockKey, Duration waited) {
    record(acquired, waited);
  }

  @Override
  public void notAcquired(String lockKey, Duration waited) {
    record(notAcquired, waited);
  }

  @Override
  public void failed(String lockKey, Duration waited, Throwable cause) {
    record(failed, waited);
  }

  @Override
  public void lost(String lockKey, RedlockdLockLostException lost) {
    Counter c = losses;
    if (c != null) {
      c.increment();
    }
  }

  private static void record(Timer timer, Duration waited) {
    if (timer != null) {
      timer.record(waited);
    }
  }
}
