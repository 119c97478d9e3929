package dev.redlockd.spring;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LeaseLostException;
import dev.redlockd.client.LockNotAcquiredException;
import dev.redlockd.client.LockOptions;
import dev.redlockd.client.LockServiceException;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One key's lock in a {@link RedlockdLockRegistry}: a thread of this process holds it (a local
 * {@link ReentrantLock}, so that threads of one process queue here rather than on the server),
 * and while it does, one kept lease on the resource {@code prefix + key} (acquired when the
 * thread's first hold begins, renewed over a KeepAlive stream, released when its last hold
 * ends). Reentrant per thread; only the holding thread may unlock.
 *
 * <p>A lease lost while held (the ttl ran out while renewals could not reach a quorum, a
 * ForceRelease) is reported to the registry's listeners at once, and the holding thread's next
 * call on the lock throws {@link RedlockdLockLostException}: each {@code unlock} of a hold taken
 * under it (which still ends that hold), and a reentrant {@code lock}/{@code tryLock} (which
 * takes no hold). Once its holds are unlocked, the lock is free again, and the next holder gets
 * a new lease.
 *
 * <p>What {@link java.util.concurrent.locks.Lock} cannot say, this class does, to the holding
 * thread: {@link #fencingToken()}, to send with every write the lock protects, and
 * {@link #isValid()}.
 */
public final class RedlockdLock implements DistributedLock {
  /** How long one Acquire call waits when the caller waits without end: the call is then made again. */
  static final Duration WAIT_PER_CALL = Duration.ofSeconds(60);

  private final RedlockdLockRegistry registry;
  private final String key;
  private final ReentrantLock local = new ReentrantLock();
  /** The lease of the current holds, or null while the lock is free. Written by the holding thread only. */
  private volatile Held held;
  private volatile long lastUsedNanos;

  /** One lease, from its grant to its release; its loss, once, if it is lost meanwhile. */
  private static final class Held {
    final Lease lease;
    volatile RedlockdLockLostException lost;

    Held(Lease lease) {
      this.lease = lease;
    }
  }

  RedlockdLock(RedlockdLockRegistry registry, String key) {
    this.registry = registry;
    this.key = key;
    this.lastUsedNanos = registry.nanoTime();
  }

  /** The key it was obtained with, without the registry's prefix. */
  public String key() {
    return key;
  }

  @Override
  public void lock() {
    lock(registry.ttl());
  }

  /**
   * Takes the lock, waiting as long as it takes; an interrupt meanwhile is kept for later (set
   * again on return) and does not end the wait.
   *
   * @throws LockServiceException when the service cannot be reached (after the client's retries)
   */
  @Override
  public void lock(Duration ttl) {
    long start = registry.nanoTime();
    local.lock();
    if (reentered()) {
      return;
    }
    boolean interrupted = false;
    try {
      while (true) {
        try {
          if (acquire(ttl, WAIT_PER_CALL, start)) {
            return;
          }
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } catch (RuntimeException e) {
      local.unlock();
      registry.listener().failed(key, registry.since(start), e);
      throw e;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Takes the lock, waiting as long as it takes or until this thread is interrupted.
   *
   * @throws LockServiceException when the service cannot be reached (after the client's retries)
   */
  @Override
  public void lockInterruptibly() throws InterruptedException {
    long start = registry.nanoTime();
    local.lockInterruptibly();
    if (reentered()) {
      return;
    }
    try {
      while (!acquire(registry.ttl(), WAIT_PER_CALL, start)) {
        // not yet: wait again
      }
    } catch (InterruptedException | RuntimeException e) {
      local.unlock();
      registry.listener().failed(key, registry.since(start), e);
      throw e;
    }
  }

  /** One attempt: true when the lock was free (in this process, and on the service). */
  @Override
  public boolean tryLock() {
    long start = registry.nanoTime();
    if (!local.tryLock()) {
      registry.listener().notAcquired(key, registry.since(start));
      return false;
    }
    if (reentered()) {
      return true;
    }
    try {
      return acquireOrUnlock(registry.ttl(), Duration.ZERO, start);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    return tryLock(Duration.ofNanos(unit.toNanos(time)), registry.ttl());
  }

  /**
   * Takes the lock if it becomes free within {@code waitTime} (the wait behind another thread
   * of this process counts), with a lease of {@code ttl}.
   *
   * @throws LockServiceException when the service cannot be reached (after the client's retries)
   */
  @Override
  public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
    long start = registry.nanoTime();
    if (!local.tryLock(Math.max(0, waitTime.toNanos()), TimeUnit.NANOSECONDS)) {
      registry.listener().notAcquired(key, registry.since(start));
      return false;
    }
    if (reentered()) {
      return true;
    }
    Duration left = waitTime.minus(registry.since(start));
    return acquireOrUnlock(ttl, left.isNegative() ? Duration.ZERO : left, start);
  }

  /**
   * Ends one hold of this thread; the last one gives the lease back.
   *
   * @throws IllegalMonitorStateException when this thread does not hold the lock
   * @throws RedlockdLockLostException when the lease was lost while held (the hold ends all the same)
   */
  @Override
  public void unlock() {
    if (!local.isHeldByCurrentThread()) {
      throw new IllegalMonitorStateException("the current thread does not hold lock '" + key + "'");
    }
    Held h = held;
    if (local.getHoldCount() > 1) {
      local.unlock();
      throwIfLost(h);
      return;
    }
    held = null;
    lastUsedNanos = registry.nanoTime();
    registry.heldChanged(-1);
    local.unlock();
    if (h.lost != null) {
      throw h.lost; // the client gave the lease back when it declared the loss
    }
    // Past the guard before its deadline without a renewal: the loss is certain, its report may
    // be a few milliseconds away (and would not come once the lease is released below).
    RedlockdLockLostException ranOut = h.lease.isValid() ? null : lost(h, Status.DEADLINE_EXCEEDED.withDescription(
        "lock '" + key + "': its lease ran out before it was unlocked"));
    boolean released;
    // A thread interrupted (an executor shutting down, a leader initiator stopping) still gives
    // the lease back rather than leave it taken until its ttl: the call would fail at once on the
    // interrupt. The interrupt is the caller's, and is set again afterwards.
    boolean interrupted = Thread.interrupted();
    try {
      released = h.lease.release();
    } catch (LockServiceException e) {
      if (ranOut != null) {
        throw ranOut;
      }
      // The lease runs out at its ttl; no one can take the lock before, and this holder is done.
      registry.releaseFailed(key, e);
      return;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    if (ranOut != null) {
      throw ranOut;
    }
    if (!released) {
      throw lost(h, Status.NOT_FOUND.withDescription("lock '" + key + "' was no longer held when it was unlocked"));
    }
    registry.listener().released(key);
  }

  /** Conditions need a monitor shared by the waiters; a lease held over the network is not one. */
  @Override
  public Condition newCondition() {
    throw new UnsupportedOperationException("a redlockd lock has no conditions");
  }

  /**
   * The fencing token of the lease the current thread holds: it strictly increases from one
   * holder of the lock to the next, so a store that remembers the highest it has seen can refuse
   * the writes of a holder whose lease ran out while it was paused. Send it with every write.
   *
   * @throws IllegalMonitorStateException when the current thread does not hold the lock
   * @throws RedlockdLockLostException when its lease was lost
   */
  public long fencingToken() {
    return heldByCurrentThread().lease.fencingToken();
  }

  /**
   * True while the current thread holds the lock and its lease can be relied on: until the
   * guard before its local deadline (renewals move it on), its loss, or its release.
   */
  public boolean isValid() {
    Held h = held;
    return local.isHeldByCurrentThread() && h != null && h.lost == null && h.lease.isValid();
  }

  /** Whether some thread of this process holds it. */
  public boolean isLocked() {
    return local.isLocked();
  }

  /** Whether the current thread holds it. */
  public boolean isHeldByCurrentThread() {
    return local.isHeldByCurrentThread();
  }

  /**
   * Changes the ttl of the lease the current thread holds (through its KeepAlive stream).
   *
   * @throws IllegalMonitorStateException when the current thread does not hold the lock
   * @throws RedlockdLockLostException when its lease was lost
   */
  void extend(Duration ttl) {
    Held h = heldByCurrentThread();
    try {
      h.lease.extend(ttl);
    } catch (LeaseLostException e) {
      throw lost(h, e);
    }
  }

  long lastUsedNanos() {
    return lastUsedNanos;
  }

  private Held heldByCurrentThread() {
    Held h = held;
    if (!local.isHeldByCurrentThread() || h == null) {
      throw new IllegalMonitorStateException("the current thread does not hold lock '" + key + "'");
    }
    throwIfLost(h);
    return h;
  }

  /**
   * Called holding the local lock: true when this is a further hold of the thread that holds
   * it (nothing to ask the service); throws, releasing that further hold, when its lease was lost.
   */
  private boolean reentered() {
    if (local.getHoldCount() == 1) {
      return false;
    }
    Held h = held;
    if (h.lost != null || !h.lease.isValid()) {
      local.unlock();
      throw h.lost != null ? h.lost : lost(h, Status.DEADLINE_EXCEEDED.withDescription(
          "lock '" + key + "': its lease ran out"));
    }
    return true;
  }

  /** {@link #acquire}, giving the local hold back when not acquired or on a failure. */
  private boolean acquireOrUnlock(Duration ttl, Duration wait, long start) throws InterruptedException {
    boolean acquired = false;
    try {
      acquired = acquire(ttl, wait, start);
      return acquired;
    } catch (InterruptedException | RuntimeException e) {
      registry.listener().failed(key, registry.since(start), e);
      throw e;
    } finally {
      if (!acquired) {
        local.unlock();
      }
    }
  }

  /**
   * Called holding the local lock for the first time: one Acquire of up to {@code wait}; on a
   * grant, the lease is kept alive and its loss watched. False when someone else still holds it.
   */
  private boolean acquire(Duration ttl, Duration wait, long start) throws InterruptedException {
    CompletableFuture<Lease> granted = registry.client().acquireAsync(registry.resource(key),
        LockOptions.ttl(ttl).waitUpTo(wait));
    Lease lease;
    try {
      lease = granted.get();
    } catch (InterruptedException e) {
      granted.cancel(false); // a lease granted anyway is released by the client
      throw e;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof LockNotAcquiredException) {
        if (!wait.equals(WAIT_PER_CALL)) {
          registry.listener().notAcquired(key, registry.since(start));
        }
        return false;
      }
      if (e.getCause() instanceof LockServiceException lse) {
        throw lse;
      }
      throw new LockServiceException(Status.fromThrowable(e.getCause()), e.getCause());
    }
    Held h = new Held(lease);
    held = h;
    lastUsedNanos = registry.nanoTime();
    registry.heldChanged(+1);
    lease.keepAlive();
    lease.onLost(loss -> lost(h, loss));
    registry.listener().acquired(key, registry.since(start));
    return true;
  }

  /** Records and reports the loss of {@code h}'s lease, once; returns what its holder is to be thrown. */
  private RedlockdLockLostException lost(Held h, Status status) {
    return lost(h, new LeaseLostException(status));
  }

  private RedlockdLockLostException lost(Held h, LeaseLostException loss) {
    RedlockdLockLostException reported;
    synchronized (h) {
      if (h.lost != null) {
        return h.lost;
      }
      reported = h.lost = new RedlockdLockLostException(key, loss);
    }
    registry.listener().lost(key, reported);
    return reported;
  }

  private void throwIfLost(Held h) {
    if (h != null && h.lost != null) {
      throw h.lost;
    }
  }

  @Override
  public String toString() {
    Held h = held;
    return "RedlockdLock[key=" + key + (h == null ? ", free" : ", held, " + h.lease) + "]";
  }
}
