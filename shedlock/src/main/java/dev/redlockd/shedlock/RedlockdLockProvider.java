package dev.redlockd.shedlock;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockOptions;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link ExtensibleLockProvider} over redlockd: each ShedLock lock is a redlockd lease
 * on the resource named by the lock's name (after an optional prefix).
 *
 * <ul>
 *   <li>{@link #lock} makes one attempt (no wait) with ttl = lockAtMostFor, and is empty while
 *       anyone else holds the lock. The lease is not kept alive: a task that hangs loses it when
 *       lockAtMostFor runs out, as ShedLock expects.
 *   <li>Unlocking releases the lease, or, while lockAtLeastFor has not yet passed since the
 *       lock's start, shortens it to what is left of it, so that nobody takes the lock before.
 *   <li>{@code SimpleLock.extend} ({@code LockExtender.extendActiveLock}) renews the lease for
 *       the new lockAtMostFor from now; it is empty once the lease was lost.
 *   <li>{@link #currentFencingToken()} gives the running task its lease's fencing token, to send
 *       with every write the lock protects.
 * </ul>
 *
 * Failures to reach the service come out of {@link #lock} and {@code extend} as the client's
 * {@code LockServiceException}; the task is then not run, or not told it may go on.
 */
public final class RedlockdLockProvider implements ExtensibleLockProvider {
  private final LockClient client;
  private final String prefix;

  /** Locks the resource named exactly like the ShedLock lock. */
  public RedlockdLockProvider(LockClient client) {
    this(client, "");
  }

  /**
   * Locks the resource {@code prefix + name}, e.g. {@code "shedlock/"}: keeps the scheduler's
   * locks apart from other users of the same service (and one environment's from another's).
   */
  public RedlockdLockProvider(LockClient client, String prefix) {
    this.client = Objects.requireNonNull(client, "client");
    this.prefix = Objects.requireNonNull(prefix, "prefix");
  }

  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    long start = System.nanoTime();
    Optional<Lease> lease = client.tryAcquire(prefix + configuration.getName(),
        LockOptions.ttl(configuration.getLockAtMostFor()));
    return lease.map(l -> new RedlockdLock(HeldLocks.push(l), configuration.getName(), start,
        configuration.getLockAtLeastFor()));
  }

  /**
   * The fencing token of the lock the current thread's task runs under (the innermost one, for
   * nested locks): it strictly increases from one holder of a lock to the next, so a store that
   * remembers the highest it has seen can refuse a write from a holder whose lease ran out
   * while it was paused. Unchanged by extends; read it in the task, on the thread ShedLock runs
   * it on.
   *
   * @throws IllegalStateException when this thread holds no lock taken through a
   *     RedlockdLockProvider (or it was unlocked)
   */
  public static long currentFencingToken() {
    Lease lease = HeldLocks.innermost();
    if (lease == null) {
      throw new IllegalStateException("no redlockd lock is held by this thread: call it from a task ShedLock runs "
          + "with a RedlockdLockProvider");
    }
    return lease.fencingToken();
  }

  @Override
  public String toString() {
    return "RedlockdLockProvider[prefix=" + prefix + "]";
  }
}
