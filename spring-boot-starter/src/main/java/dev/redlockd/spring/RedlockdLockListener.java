package dev.redlockd.spring;

import java.time.Duration;

/**
 * What happens to the locks of a {@link RedlockdLockRegistry}, for meters, logs and events. Called
 * on the thread that acted (a loss: on a client thread, as soon as the client knows); an
 * implementation must not block.
 */
public interface RedlockdLockListener {
  /** A lease was granted after {@code waited} (the wait for another thread of this process included). */
  default void acquired(String lockKey, Duration waited) {}

  /** A {@code tryLock} gave up after {@code waited}: another holder kept the lock. */
  default void notAcquired(String lockKey, Duration waited) {}

  /** An acquisition ended in an error (the service unreachable, an interrupt) after {@code waited}. */
  default void failed(String lockKey, Duration waited, Throwable cause) {}

  /** The holder unlocked, and the lease was given back. */
  default void released(String lockKey) {}

  /** The lease of a held lock was lost; the holder's next call on the lock throws {@code lost}. */
  default void lost(String lockKey, RedlockdLockLostException lost) {}
}
