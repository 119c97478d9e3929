package dev.redlockd.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease the engine keeps alive for its holder: renewed every ttl/3 on the shared scheduler
 * (no thread per lease; renewals due together share each node's pipeline), with the holder
 * told after every renewal whether the lease is held, in jeopardy, or lost.
 *
 * <p>Jeopardy: a renewal missed the quorum but the last granted validity has not run out;
 * renewals are retried faster until it does, then the lease is reported lost
 * ({@link QuorumUnavailableException}). A renewal that finds the lease gone reports
 * {@link LeaseNotHeldException}. After {@link Listener#lost} nothing more is reported.
 */
public final class KeptLease {
  private static final Logger log = LoggerFactory.getLogger(KeptLease.class);

  /**
   * Called from engine threads, one call at a time per lease. {@code mark} is the holder's
   * highest mark (see {@link #renewNow}) when the reported renewal began: the holder may count
   * the lease's validity from when it made that mark.
   */
  public interface Listener {
    /** A renewal reached a quorum. */
    void held(Grant lease, long mark);

    /** A renewal missed the quorum; {@code lease} is the last granted one, still valid. */
    void jeopardy(Grant lease, LockEngineException cause, long mark);

    /** The lease is gone or can no longer be relied on; renewals have stopped. */
    void lost(LockEngineException cause);

    /**
     * A renewal missed the quorum before any renewal by this keeper reached one (a lease just
     * resumed here, or just granted): there is no validity to report. The engine retries quietly
     * for one ttl unless the holder {@link KeptLease#stop}s it first.
     */
    default void unconfirmed(LockEngineException cause, long mark) {}

    /**
     * The same holder keeps this lease on this server through a newer stream now, whose first
     * renewal held (a client opens one only to supersede the one it has: rule 19 of
     * clients/conformance/README.md). Not before that renewal held: until then this keeper's own
     * renewal may be the one that answers first. A listener that ends its own stream for it
     * {@link KeptLease#stop}s this keeper, releasing nothing. By default both keepers go on
     * renewing, until this one's reader is seen gone.
     */
    default void superseded() {}
  }

  /** In jeopardy, retry this many times per ttl, so a quorum that comes back is noticed fast. */
  private static final int JEOPARDY_RETRIES_PER_TTL = 10;
  private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  /**
   * Regular renewals fall due on a grid, so that leases due at about the same time leave
   * together and reach each node as one pipeline instead of one wakeup each; 10,000 leases
   * renewed on their own timers cost the server and the Redis nodes several times more CPU.
   * Renewing up to one grid step early is harmless; the step stays a small share of the ttl.
   * Not coarser: all the work of one step (every node's script run, the replies, a response on
   * each stream) must finish well inside the node timeout on a busy machine; with a 50 ms step
   * and 10,000 leases, the last calls of a step missed the default 50 ms timeout.
   */
  static final long MAX_RENEWAL_GRID_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  private static final int RENEWAL_GRID_STEPS_PER_TTL = 12;

  private final Leases space;
  private final ScheduledExecutorService scheduler;
  private final RenewalBatch batch;
  private final LongSupplier nanoClock;
  private final String resource;
  private final int permit;
  private final String token;
  private final Listener listener;

  // All guarded by this.
  private Duration ttl;
  private long mark;
  /**
   * Whether a renewal (or an Extend) was granted, and the fence it reported: the fence alone,
   * not the Grant, so that each renewal's Grant dies young instead of living a whole interval.
   */
  private boolean granted;
  private long lastFence;
  private long validUntilNanos;
  /** When the latest unary Extend of this lease (through this server) was sent; see {@link #extendedElsewhere}. */
  private long extendedAtNanos = Long.MIN_VALUE;
  /** When the first renewal was asked for; before any succeeds, retries run for one ttl. */
  private long startedNanos = -1;
  private ScheduledFuture<?> next;
  /** When the renewal under way (or the next one) fell (or falls) due; see {@link #dueNanos}. */
  private long dueNanos;
  private boolean renewing;
  private boolean renewAgain;
  private boolean ended;
  /** Whether a renewal by this keeper held yet: the first one takes over from older keepers here. */
  private boolean heldOnce;

  KeptLease(Leases space, ScheduledExecutorService scheduler, RenewalBatch batch, LongSupplier nanoClock,
      String resource, int permit, String token, Duration ttl, Listener listener) {
    this.space = space;
    this.scheduler = scheduler;
    this.batch = batch;
    this.nanoClock = nanoClock;
    this.resource = resource;
    this.permit = permit;
    this.token = token;
    this.ttl = ttl;
    this.listener = listener;
  }

  public String resource() {
    return resource;
  }

  /** 0 for a lock, else which permit of the semaphore on {@link #resource()}. */
  public int permit() {
    return permit;
  }

  /** Package-private: the token never leaves the engine but to its holder. */
  String token() {
    return token;
  }

  /** Whether this lease is the one named by resource and token. */
  public boolean names(String otherResource, String otherToken) {
    return resource.equals(otherResource) && token.equals(otherToken);
  }

  /** Whether this lease is the one named by resource, permit and token. */
  public boolean names(String otherResource, int otherPermit, String otherToken) {
    return permit == otherPermit && names(otherResource, otherToken);
  }

  /**
   * Renews at once (the first renewal, or the holder asked), optionally with a new ttl.
   * {@code mark} is any number the holder raises with each ask; every later report carries
   * the highest one seen before its renewal began.
   */
  public void renewNow(Duration newTtl, long mark) {
    renewNow(newTtl, mark, false);
  }

  /**
   * As {@link #renewNow(Duration, long)}; {@code atOnce} sends it without waiting for other
   * renewals to join it, for an answer that announces something (a new leader's first).
   */
  public void renewNow(Duration newTtl, long mark, boolean atOnce) {
    Duration gatherFor;
    synchronized (this) {
      if (ended) {
        return;
      }
      long now = nanoClock.getAsLong();
      boolean ttlChanged = newTtl != null && !newTtl.equals(ttl);
      if (newTtl != null) {
        if (newTtl.compareTo(ttl) < 0 && granted) {
          // The shorter renewal may land on some nodes and still miss the quorum: from now on the
          // validity a JEOPARDY answer reports is no more than the shorter ttl leaves.
          validUntilNanos = Math.min(validUntilNanos, now + space.validityBound(newTtl).toNanos());
        }
        ttl = newTtl;
      }
      this.mark = Math.max(this.mark, mark);
      // One that changes the ttl (an extend) goes at once, as does one asked to; the others wait
      // for others (RenewalBatch), a resumed stream's first too: hundreds of them come together
      // when a replica stops (every client sends its ttl with each request: only a change counts).
      gatherFor = atOnce || ttlChanged ? Duration.ZERO : ttl;
      if (startedNanos < 0) {
        startedNanos = now;
      }
      if (next != null) {
        next.cancel(false);
        next = null;
      }
      if (renewing) {
        renewAgain = true;
        return;
      }
      renewing = true;
      dueNanos = now;
    }
    // Through the batch too: the holders' requests that come within its gathering window share
    // each node's call.
    batch.add(this, gatherFor);
  }

  /** Stops renewing; the lease runs out at its validity. Idempotent. */
  public void stop() {
    synchronized (this) {
      ended = true;
      if (next != null) {
        next.cancel(false);
        next = null;
      }
    }
    space.unkept(this);
  }

  /**
   * A unary Extend of this lease, sent at {@code sentNanos}, set its ttl on a quorum: renewals
   * go on with that ttl, the next one falls due by it (a shorter ttl must not wait out the
   * longer one's period), and the validity reported in jeopardy is the Extend's, since the nodes
   * now hold the lease that long.
   */
  void extendedElsewhere(Grant lease, long sentNanos, Duration newTtl) {
    synchronized (this) {
      if (ended) {
        return;
      }
      ttl = newTtl;
      granted = true;
      lastFence = lease.fencingToken();
      validUntilNanos = sentNanos + lease.validity().toNanos();
      extendedAtNanos = Math.max(extendedAtNanos, sentNanos);
      if (next != null) {
        next.cancel(false);
        scheduleLocked(onGrid(nanoClock.getAsLong(), newTtl.toNanos() / 3, newTtl));
      }
      // else a renewal is under way: when it ends it schedules the next by the shorter of the two ttls
    }
  }

  /**
   * Stops renewing and releases the lease on every node; true if a quorum still held it.
   * Without a quorum the release is retried while the lease may still be valid: after that
   * it has run out anyway.
   */
  public CompletableFuture<Boolean> release() {
    long validUntil;
    synchronized (this) {
      validUntil = validUntilNanos;
    }
    stop();
    return releaseBefore(validUntil);
  }

  private CompletableFuture<Boolean> releaseBefore(long validUntil) {
    return space.release(resource, permit, token).handle((released, failure) -> {
      if (failure == null) {
        return CompletableFuture.completedFuture(released);
      }
      Throwable cause = unwrap(failure);
      long left = validUntil - nanoClock.getAsLong();
      if (!(cause instanceof QuorumUnavailableException) || left <= 0) {
        return CompletableFuture.<Boolean>failedFuture(cause);
      }
      long retry;
      synchronized (this) {
        retry = Math.max(MIN_RETRY_NANOS, ttl.toNanos() / JEOPARDY_RETRIES_PER_TTL);
      }
      CompletableFuture<Boolean> again = new CompletableFuture<>();
      scheduler.schedule(() -> releaseBefore(validUntil).whenComplete((r, f) -> {
        if (f == null) {
          again.complete(r);
        } else {
          again.completeExceptionally(unwrap(f));
        }
      }), Math.min(retry, left), TimeUnit.NANOSECONDS);
      return again;
    }).thenCompose(f -> f);
  }

  synchronized boolean ended() {
    return ended;
  }

  /** A newer keeper of the same lease renewed it on this server: see {@link Listener#superseded}. */
  void superseded() {
    if (!ended()) {
      listener.superseded();
    }
  }

  /**
   * A renewal as it begins: what to extend, the holder's mark at that moment, and when the
   * renewal fell due (the batch measures the engine's lag by it).
   */
  record Start(Redlock.Extension extension, long mark, long dueNanos) {}

  /** What to renew now, for this lease alone or for a batch of renewals that fell due together. */
  synchronized Start start() {
    return new Start(new Redlock.Extension(resource, token, ttl, permit), mark, dueNanos);
  }

  /** Takes the outcome of a renewal that began as {@code start} and was sent at {@code sentNanos}. */
  void whenRenewed(CompletableFuture<Grant> renewal, long sentNanos, Start start) {
    renewal.whenComplete((lease, failure) -> {
      try {
        if (lease != null) {
          renewed(lease, sentNanos, start);
        } else {
          failed(unwrap(failure), start.mark());
        }
      } finally {
        boolean again;
        synchronized (this) {
          again = renewAgain && !ended;
          renewAgain = false;
          renewing = again;
          if (again) {
            dueNanos = nanoClock.getAsLong();
          }
        }
        if (again) {
          batch.add(this, ttlNow());
        }
      }
    });
  }

  private void renewed(Grant lease, long sentNanos, Start start) {
    boolean first;
    synchronized (this) {
      if (ended) {
        return;
      }
      first = !heldOnce;
      heldOnce = true;
      granted = true;
      lastFence = lease.fencingToken();
      long renewedUntil = sentNanos + lease.validity().toNanos();
      // An Extend sent after this renewal may have landed after it, with a shorter ttl: then the
      // nodes hold the lease only as long as the shorter of the two says.
      validUntilNanos = extendedAtNanos > sentNanos ? Math.min(validUntilNanos, renewedUntil) : renewedUntil;
      // If the ttl changed while this renewal was under way, whichever landed last governs: the next
      // renewal comes by the shorter one.
      Duration due = start.extension().ttl().compareTo(ttl) <= 0 ? start.extension().ttl() : ttl;
      scheduleLocked(onGrid(nanoClock.getAsLong(), due.toNanos() / 3, due));
    }
    listener.held(lease, start.mark());
    if (first) {
      space.tookOver(this);
    }
  }

  private void failed(Throwable cause, long markAtStart) {
    LockEngineException lost = null;
    Grant stillValid = null;
    boolean unconfirmed = false;
    synchronized (this) {
      if (ended) {
        return;
      }
      long now = nanoClock.getAsLong();
      long left = validUntilNanos - now;
      long retry = Math.max(MIN_RETRY_NANOS, ttl.toNanos() / JEOPARDY_RETRIES_PER_TTL);
      if (cause instanceof QuorumUnavailableException && granted && left > 0) {
        stillValid = new Grant(resource, token, Duration.ofNanos(left), lastFence, permit);
        scheduleLocked(Math.min(retry, left));
      } else if (cause instanceof QuorumUnavailableException && !granted
          && now - startedNanos < ttl.toNanos()) {
        // No renewal has succeeded yet, so there is no validity to report: retry quietly.
        // Extend is compare-and-pexpire, so a lease that ran out meanwhile ends as NOT_FOUND.
        scheduleLocked(retry);
        unconfirmed = true;
      } else {
        ended = true;
        lost = asEngineException(cause, left);
      }
    }
    if (unconfirmed) {
      listener.unconfirmed((LockEngineException) cause, markAtStart);
      return;
    }
    if (lost != null) {
      space.unkept(this);
    }
    if (stillValid != null) {
      listener.jeopardy(stillValid, (LockEngineException) cause, markAtStart);
    } else {
      if (lost instanceof LeaseNotHeldException) {
        space.announceFree(resource); // it ran out, perhaps, and someone may be waiting for it
      }
      listener.lost(lost);
    }
  }

  /** A delay shortened by less than one grid step so that it ends on the renewal grid for this ttl. */
  static long onGrid(long nowNanos, long delayNanos, Duration ttl) {
    long step = Math.min(MAX_RENEWAL_GRID_NANOS, ttl.toNanos() / RENEWAL_GRID_STEPS_PER_TTL);
    if (step <= 0) {
      return delayNanos;
    }
    long due = nowNanos + delayNanos;
    return Math.max(0, due - Math.floorMod(due, step) - nowNanos);
  }

  /** When the last validity runs out during jeopardy, the lease is lost even if a renewal is still under way. */
  private void scheduleLocked(long delayNanos) {
    dueNanos = nanoClock.getAsLong() + delayNanos;
    next = scheduler.schedule(this::renewWhenDue, delayNanos, TimeUnit.NANOSECONDS);
  }

  /** A renewal fell due: it joins the batch of those due together. */
  private void renewWhenDue() {
    synchronized (this) {
      if (ended) {
        return;
      }
      next = null;
      if (renewing) {
        renewAgain = true;
        return;
      }
      renewing = true;
    }
    batch.add(this, ttlNow());
  }

  private synchronized Duration ttlNow() {
    return ttl;
  }

  private LockEngineException asEngineException(Throwable cause, long leftNanos) {
    if (cause instanceof QuorumUnavailableException unavailable && granted) {
      return new QuorumUnavailableException(unavailable.getMessage() + "; the lease's validity ran out "
          + TimeUnit.NANOSECONDS.toMillis(-leftNanos) + "ms ago");
    }
    if (cause instanceof LockEngineException e) {
      return e;
    }
    log.error("renewal of a kept lease on resource '{}' failed unexpectedly", resource, cause);
    return new QuorumUnavailableException("resource '" + resource + "': renewal failed ("
        + cause.getClass().getSimpleName() + ")");
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  @Override
  public String toString() {
    return "KeptLease[resource=" + resource + (permit == 0 ? "" : ", permit=" + permit) + "]";
  }
}
