package dev.redlockd.client;

/**
 * Work done under a lock by {@link LockClient#withLock(String, LockOptions, LockedWork)} (or
 * under a permit by {@link LockClient#withPermit(String, int, LockOptions, LockedWork)}). It gets the lease so that it can send the fencing token
 * with every write to the protected resource.
 */
@FunctionalInterface
public interface LockedWork<T> {
  T run(Lease lease) throws Exception;
}
