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
 * larger drift factor), the shortfall is added and the Extend sent again. The client's belief is
 * only ever what an answer set; an Extend that would not shorten the lease is not sent.
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
   * Keeps {@code lease} held until {@code endNanos} (on the client's monotonic clock) and no
   * longer than that plus the allowance, then lets it go.
   *
   * @throws LockServiceException when an Extend or the Release failed for another reason than
   *     the lease being gone already; the lease then runs out by itself at the latest
   */
  void giveBack(Lease lease, long endNanos) {
    long now = nanoClock.getAsLong();
    if (endNanos - now <= 0) {
      lease.release();
      return;
    }
    long allowance = estimatedAllowance(endNanos - now);
    for (int attempt = 1; attempt <= MAX_EXTENDS; attempt++) {
      long left = endNanos - now;
      if (left <= 0) {
        return; // an earlier Extend holds it past the end already
      }
      long ttl = Math.max(left + allowance, MIN_TTL.toNanos());
      if (ttl >= lease.deadlineNanos() - now) {
        return; // it would not shorten the lease: keep what it has
      }
      try {
        lease.extend(Duration.ofNanos(ttl));
      } catch (LockServiceException e) {
        if (!lease.isValid()) {
          return; // gone (NOT_FOUND, or run out): nothing is left to give back
        }
        throw e;
      }
      now = nanoClock.getAsLong();
      long givenBackAt = now + lease.remaining().toNanos();
      if (givenBackAt - endNanos >= 0) {
        return;
      }
      allowance += endNanos - givenBackAt;
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
