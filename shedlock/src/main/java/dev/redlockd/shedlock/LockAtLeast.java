package dev.redlockd.shedlock;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LockServiceException;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Gives back a lease whose task is over, but not before the end of its lockAtLeastFor.
 *
 * <p>When that end has passed, the lease is released. Otherwise it is shortened with an Extend
 * to what is left, so that the lock frees itself then rather than at the end of lockAtMostFor.
 * The client gives a lease back a guard before the deadline it believes, and that deadline is
 * the Extend's send time plus the validity the server answers (the ttl less the call's time and
 * the drift allowance): so the Extend asks for what is left plus an allowance for those, and
 * the answer tells whether that was enough. When it fell short (a slow call, a server with a
 * larger drift factor), the Extend is sent again, asking for as much more as that answer lost.
 * The client's belief is only ever what an answer set (rule 2: while an Extend that shortens
 * is on its way, nothing reads the lease, whose task is over); an Extend that would not
 * shorten the lease is not sent.
 */
final class LockAtLeast {
  /** The shortest ttl asked for: the server's default minimum. */
  static final Duration MIN_TTL = Duration.ofMillis(10);
  private static final int MAX_EXTENDS = 3;

  private final LongSupplier nanoClock;

  LockAtLeast(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
  }

  /**
   * Keeps {@code lease} held until {@code endNanos} (on the client's monotonic clock), and not
   * much longer, then lets it go.
   *
   * @throws LockServiceException when an Extend or the Release failed for another reason than
   *     the lease being gone already; the lease then runs out by itself, at the end of
   *     lockAtMostFor at the latest
   */
  void giveBack(Lease lease, long endNanos) {
    long now = nanoClock.getAsLong();
    if (endNanos - now <= 0) {
      lease.release();
      return;
    }
    // What lockAtMostFor left it: no Extend here asks for more.
    long limitNanos = lease.deadlineNanos();
    long ttl = endNanos - now + estimatedAllowance(endNanos - now);
    for (int attempt = 1; ; attempt++) {
      ttl = Math.max(ttl, MIN_TTL.toNanos());
      if (now + ttl - limitNanos >= 0) {
        if (attempt == 1) {
          return; // it would not shorten the lease: keep what it has
        }
        ttl = limitNanos - now; // topped up as far as lockAtMostFor goes
        if (ttl < MIN_TTL.toNanos()) {
          return;
        }
      }
      try {
        lease.extend(Duration.ofNanos(ttl));
      } catch (LockServiceException e) {
        if (!lease.isValid()) {
          return; // gone (NOT_FOUND, or run out): nothing is left to give back
        }
        throw e;
      }
      long answered = nanoClock.getAsLong();
      long givenBackAt = answered + lease.remaining().toNanos();
      if (givenBackAt - endNanos >= 0 || attempt == MAX_EXTENDS) {
        return;
      }
      // Of the ttl asked for, the client counts on this much from the send; what it loses
      // (the guard, the drift allowance, the call) grows no faster than the ttl, so asking
      // for the same share of what is left now is enough.
      long counted = Math.max(givenBackAt - now, 1);
      now = answered;
      ttl = (long) Math.ceil((double) (endNanos - now) * ttl / counted) + Duration.ofMillis(1).toNanos();
    }
  }

  /**
   * What an Extend of about {@code left} usually loses before the client gives the lease back:
   * the guard (ttl/20, at most 100 ms), the server's default drift allowance (1 % and 2 ms)
   * with room to spare, and a few milliseconds for the call itself.
   */
  static long estimatedAllowance(long leftNanos) {
    long guard = Math.min(leftNanos / 19, Duration.ofMillis(100).toNanos());
    long drift = leftNanos / 66 + Duration.ofMillis(2).toNanos();
    return guard + drift + Duration.ofMillis(5).toNanos();
  }
}
