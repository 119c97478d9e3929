package dev.redlockd.shedlock;

import dev.redlockd.client.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;

/**
 * The leases each thread holds through a {@link RedlockdLockProvider}, innermost last: what
 * {@link RedlockdLockProvider#currentFencingToken()} reads. ShedLock runs a task on the thread
 * that locked it and unlocks it there, as its own {@code LockAssert} and {@code LockExtender}
 * assume; a lock unlocked on another thread is only marked ended, and its thread drops it the
 * next time it looks.
 */
final class HeldLocks {
  private static final ThreadLocal<Deque<Held>> HELD = new ThreadLocal<>();

  private HeldLocks() {
  }

  /** One lease, from its lock until its unlock, shared by the locks an extend hands on. */
  static final class Held {
    final Lease lease;
    private final Thread thread;
    private volatile boolean ended;

    private Held(Lease lease, Thread thread) {
      this.lease = lease;
      this.thread = thread;
    }

    /** The task is over: its thread no longer reports this lease's token. */
    void end() {
      ended = true;
      if (Thread.currentThread() == thread) {
        Deque<Held> held = HELD.get();
        if (held != null) {
          held.remove(this);
          if (held.isEmpty()) {
            HELD.remove();
          }
        }
      }
    }
  }

  /** Registers a lease the current thread has just taken. */
  static Held push(Lease lease) {
    Held h = new Held(lease, Thread.currentThread());
    Deque<Held> held = HELD.get();
    if (held == null) {
      held = new ArrayDeque<>();
      HELD.set(held);
    }
    held.addLast(h);
    return h;
  }

  /** The current thread's innermost lease not yet unlocked, or null. */
  static Lease innermost() {
    Deque<Held> held = HELD.get();
    if (held == null) {
      return null;
    }
    for (Iterator<Held> it = held.descendingIterator(); it.hasNext(); ) {
      Held h = it.next();
      if (!h.ended) {
        return h.lease;
      }
      it.remove();
    }
    HELD.remove();
    return null;
  }
}
