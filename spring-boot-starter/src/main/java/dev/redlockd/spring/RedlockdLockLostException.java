package dev.redlockd.spring;

import dev.redlockd.client.LeaseLostException;
import java.util.ConcurrentModificationException;

/**
 * The lease under a {@link RedlockdLock} was lost while a thread held the lock: its critical
 * section may have overlapped another holder's. Thrown by the holding thread's next call on the
 * lock ({@code unlock}, or a reentrant {@code lock}/{@code tryLock}); the cause says how the lease
 * was lost (its gRPC status). A {@link ConcurrentModificationException}, as the one
 * {@code RedisLockRegistry} and {@code JdbcLockRegistry} throw from {@code unlock} when their
 * lock expired in the store, so that code written for them catches it too.
 */
public class RedlockdLockLostException extends ConcurrentModificationException {
  private static final long serialVersionUID = 1L;

  private final String lockKey;

  public RedlockdLockLostException(String lockKey, LeaseLostException cause) {
    super("the lease of lock '" + lockKey + "' was lost while it was held (" + cause.getMessage()
        + "): the work done under it may have overlapped another holder's", cause);
    this.lockKey = lockKey;
  }

  /** The key the lock was obtained with (without the registry's prefix). */
  public String lockKey() {
    return lockKey;
  }

  @Override
  public synchronized LeaseLostException getCause() {
    return (LeaseLostException) super.getCause();
  }
}
