package dev.redlockd.spring;

import org.springframework.context.ApplicationEvent;

/**
 * Published when the lease of a lock a thread holds is lost, as soon as the client knows; the
 * holding thread's next call on the lock throws {@link #exception()}. Listen for it
 * ({@code @EventListener}) to stop the work the lock protects at once rather than at its end.
 */
public class RedlockdLockLostEvent extends ApplicationEvent {
  private static final long serialVersionUID = 1L;

  private final transient RedlockdLockLostException exception;

  public RedlockdLockLostEvent(RedlockdLockRegistry source, RedlockdLockLostException exception) {
    super(source);
    this.exception = exception;
  }

  /** The key the lock was obtained with. */
  public String lockKey() {
    return exception.lockKey();
  }

  public RedlockdLockLostException exception() {
    return exception;
  }
}
