package dev.redlockd.server.access;

import dev.redlockd.engine.Grant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The leases each identity holds through this server, each with the slot it takes in its
 * identity's quota and the time its validity ends. Nothing tells the server when a lease runs out
 * on the nodes, so a lease past its validity gives its slot back the next time its identity asks
 * for one; a release gives it back at once. Keys hold the token, in memory only.
 */
final class HeldLeases {
  private static final Quotas.Slot NOTHING = () -> { };

  private final Quotas quotas = new Quotas("held leases");
  private final LongSupplier nanoClock;
  private final Map<String, Map<String, Held>> byIdentity = new ConcurrentHashMap<>();

  private static final class Held {
    final Quotas.Slot slot;
    long validUntil;

    Held(Quotas.Slot slot, long validUntil) {
      this.slot = slot;
      this.validUntil = validUntil;
    }
  }

  HeldLeases(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
  }

  /**
   * Room for one more lease before an Acquire, or {@link Quotas.Exhausted}. A same-token Acquire
   * of a lease the identity holds refreshes it and needs no room.
   */
  Quotas.Slot reserve(String identity, String resource, String token, int limit) throws Quotas.Exhausted {
    Map<String, Held> mine = leasesOf(identity);
    synchronized (mine) {
      long now = nanoClock.getAsLong();
      for (Iterator<Held> it = mine.values().iterator(); it.hasNext(); ) {
        Held held = it.next();
        if (held.validUntil - now <= 0) {
          held.slot.close();
          it.remove();
        }
      }
      if (!token.isEmpty() && mine.containsKey(key(resource, token))) {
        return NOTHING;
      }
    }
    return quotas.take(identity, limit);
  }

  /** A grant: the reserved slot is now the lease's (or given back, if the lease was counted already). */
  void granted(String identity, Grant lease, Quotas.Slot reserved) {
    Map<String, Held> mine = leasesOf(identity);
    synchronized (mine) {
      Held held = mine.get(key(lease.resource(), lease.token()));
      if (held == null) {
        mine.put(key(lease.resource(), lease.token()), new Held(reserved, validUntil(lease)));
      } else {
        reserved.close();
        held.validUntil = validUntil(lease);
      }
    }
  }

  void renewed(String identity, Grant lease) {
    Map<String, Held> mine = leasesOf(identity);
    synchronized (mine) {
      Held held = mine.get(key(lease.resource(), lease.token()));
      if (held != null) {
        held.validUntil = validUntil(lease);
      }
    }
  }

  void released(String identity, String resource, String token) {
    Map<String, Held> mine = leasesOf(identity);
    synchronized (mine) {
      Held held = mine.remove(key(resource, token));
      if (held != null) {
        held.slot.close();
      }
    }
  }

  /** Leases counted for the identity now, expired ones included until its next reservation. */
  int count(String identity) {
    return quotas.count(identity);
  }

  private Map<String, Held> leasesOf(String identity) {
    return byIdentity.computeIfAbsent(identity, id -> new HashMap<>());
  }

  private long validUntil(Grant lease) {
    return nanoClock.getAsLong() + lease.validity().toNanos();
  }

  private static String key(String resource, String token) {
    return resource + '\0' + token;
  }
}
