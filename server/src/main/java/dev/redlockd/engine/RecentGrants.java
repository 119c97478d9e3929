package dev.redlockd.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The leases this replica granted or renewed whose validity still runs, with when it ends: a
 * thrifty renewal that finds fewer than a quorum of nodes holding one may put it back on free
 * nodes only before then (while its holder holds a quorum, no one else can be granted it). A
 * lease granted or last renewed through another replica is not here, and is not put back.
 */
final class RecentGrants {
  /** Sweeps the ended ones out once there are this many (then twice as many as were left). */
  private static final int FIRST_SWEEP = 1024;

  /** What was granted on a lease key: the holder's token, its fence, its ttl, and when its validity ends. */
  record Held(String token, long fence, long ttlMillis, long untilNanos) {}

  private final Map<String, Held> byLease = new ConcurrentHashMap<>();
  private final LongSupplier nanoClock;
  private volatile int sweepAt = FIRST_SWEEP;

  RecentGrants(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
  }

  /**
   * A grant or renewal of {@code lease}. Renewals of one token may complete out of order: with
   * the same ttl, each one's validity holds, so the later end is kept; with another ttl, the one
   * that landed last on the nodes governs, which is not known here, so the earlier end is kept.
   */
  void granted(String lease, String token, long fence, long ttlMillis, long untilNanos) {
    Held now = new Held(token, fence, ttlMillis, untilNanos);
    byLease.merge(lease, now, (was, next) -> {
      if (!was.token().equals(next.token()) || was.fence() != next.fence()) {
        return next;
      }
      boolean later = next.untilNanos() - was.untilNanos() > 0;
      return was.ttlMillis() == next.ttlMillis() ? (later ? next : was) : (later ? was : next);
    });
    if (byLease.size() >= sweepAt) {
      sweep();
    }
  }

  /** The lease is gone for {@code token} (released, or found not held): nothing to put back. */
  void ended(String lease, String token) {
    byLease.computeIfPresent(lease, (key, held) -> held.token().equals(token) ? null : held);
  }

  /** What this replica last granted {@code token} on {@code lease}, if its validity still runs; else null. */
  Held of(String lease, String token) {
    Held held = byLease.get(lease);
    if (held == null || !held.token().equals(token) || held.untilNanos() - nanoClock.getAsLong() <= 0) {
      return null;
    }
    return held;
  }

  int size() {
    return byLease.size();
  }

  private synchronized void sweep() {
    if (byLease.size() < sweepAt) {
      return;
    }
    long now = nanoClock.getAsLong();
    byLease.values().removeIf(held -> held.untilNanos() - now <= 0);
    sweepAt = Math.max(FIRST_SWEEP, 2 * byLease.size());
  }
}
