package dev.redlockd.server.access;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.ToIntFunction;

/**
 * Counts, per identity, one kind of thing it has under way (held leases, open KeepAlive streams,
 * waiting Acquire calls) and refuses a new one past the identity's limit, so that one tenant cannot
 * use up a server-wide limit on its own. A slot taken must be given back exactly once by its holder
 * ({@link Slot#close()} is idempotent). Counters live in a concurrent map of per-identity entries
 * updated under {@code compute}, so a check and its increment are one step and an identity's
 * entry disappears when its count returns to zero.
 */
public final class Quotas {
  private final String what;
  private final ConcurrentHashMap<String, Integer> counts = new ConcurrentHashMap<>();

  /** {@code what} names the limit in refusals, e.g. "held leases". */
  public Quotas(String what) {
    this.what = what;
  }

  /** A taken slot; closing it gives the slot back (once, however often it is closed). */
  public interface Slot extends AutoCloseable {
    @Override
    void close();
  }

  /** Thrown when the identity already has {@code limit} under way. */
  public static final class Exhausted extends Exception {
    Exhausted(String message) {
      super(message, null, false, false);
    }
  }

  /** Takes a slot for the identity, or refuses with a message naming the identity and the limit. */
  public Slot take(String identity, int limit) throws Exhausted {
    boolean[] taken = {false};
    counts.compute(identity, (id, count) -> {
      int now = count == null ? 0 : count;
      if (now >= limit) {
        return count; // unchanged (null stays absent)
      }
      taken[0] = true;
      return now + 1;
    });
    if (!taken[0]) {
      throw new Exhausted("identity '" + identity + "' has reached its limit of " + limit + " " + what);
    }
    AtomicBoolean open = new AtomicBoolean(true);
    return () -> {
      if (open.compareAndSet(true, false)) {
        counts.computeIfPresent(identity, (id, count) -> count <= 1 ? null : count - 1);
      }
    };
  }

  /** How many the identity has under way now (for tests and metrics). */
  public int count(String identity) {
    return counts.getOrDefault(identity, 0);
  }

  /** A slot within the identity's limit in the policy, e.g. {@code take(id, policy, Limits::heldLeases)}. */
  public Slot take(String identity, Policy policy, ToIntFunction<Limits> limit) throws Exhausted {
    return take(identity, limit.applyAsInt(policy.limitsFor(identity)));
  }
}
