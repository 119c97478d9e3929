package dev.redlockd.shedlock;

import dev.redlockd.client.LeaseLostException;
import dev.redlockd.client.LockServiceException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock lock over one redlockd lease, from its lock (or the extend that handed it on) to its
 * unlock or next extend. Unlocking gives the lease back at the end of lockAtLeastFor, counted
 * from this lock's start ({@link LockAtLeast}).
 */
final class RedlockdLock implements SimpleLock {
  private static final Logger log = LoggerFactory.getLogger(RedlockdLock.class);

  private enum State { ACTIVE, UNLOCKED, EXTENDED, LOST }

  private final HeldLocks.Held held;
  private final String name;
  /** When lockAtLeastFor ends, on {@link System#nanoTime()}. */
  private final long atLeastUntilNanos;
  private State state = State.ACTIVE; // guarded by this

  RedlockdLock(HeldLocks.Held held, String name, long startNanos, Duration lockAtLeastFor) {
    this.held = held;
    this.name = name;
    this.atLeastUntilNanos = startNanos + lockAtLeastFor.toNanos();
  }

  /**
   * Ends the lock: released now if lockAtLeastFor has passed, else shortened to what is left
   * of it, also on an interrupted thread. Never throws for the lease itself: one that could not
   * be reached runs out by itself, at the end of lockAtMostFor at the latest (logged). After an
   * extend that found the lease lost, it only ends the lock (the lease is gone).
   *
   * @throws IllegalStateException when it was already unlocked, or extended
   */
  @Override
  public void unlock() {
    synchronized (this) {
      if (state == State.LOST) {
        state = State.UNLOCKED;
        held.end();
        return;
      }
      requireActive();
      state = State.UNLOCKED;
    }
    held.end();
    // A task interrupted (a scheduler shutting down) still gives its lock back, instead of
    // leaving it taken until lockAtMostFor: the calls would fail at once on the interrupt. The
    // interrupt is the caller's, and is set again afterwards.
    boolean interrupted = Thread.interrupted();
    try {
      new LockAtLeast(System::nanoTime).giveBack(held.lease, atLeastUntilNanos);
    } catch (LockServiceException e) {
      log.warn("ShedLock lock '{}': could not give the lease back ({}); it runs out by itself, "
          + "at the end of lockAtMostFor at the latest", name, e.getMessage());
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Renews the lease for {@code lockAtMostFor} from now (an Extend; the answer sets how long
   * the client counts on it) and hands it on to a new lock whose lockAtLeastFor counts from
   * now. Empty when the lease was lost: this lock then only ends on unlock.
   *
   * @throws IllegalStateException when it was already unlocked, or extended
   * @throws LockServiceException when the Extend failed without telling whether the lease is
   *     held (this lock stays the active one)
   */
  @Override
  public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
    Objects.requireNonNull(lockAtMostFor, "lockAtMostFor");
    Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor");
    if (lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
      throw new IllegalArgumentException("lockAtLeastFor is longer than lockAtMostFor for lock '" + name + "'");
    }
    synchronized (this) {
      requireActive();
      long start = System.nanoTime();
      try {
        held.lease.extend(lockAtMostFor);
      } catch (LeaseLostException e) {
        state = State.LOST;
        return Optional.empty();
      }
      state = State.EXTENDED;
      return Optional.of(new RedlockdLock(held, name, start, lockAtLeastFor));
    }
  }

  private void requireActive() {
    if (state != State.ACTIVE) {
      throw new IllegalStateException("ShedLock lock '" + name + "' was already "
          + (state == State.UNLOCKED ? "unlocked" : "extended"));
    }
  }

  @Override
  public String toString() {
    return "RedlockdLock[name=" + name + ", " + held.lease + "]";
  }
}
