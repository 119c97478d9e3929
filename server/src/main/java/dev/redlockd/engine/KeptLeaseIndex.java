package dev.redlockd.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The leases one space keeps alive on this server, by resource and token, so that a unary
 * Extend of a kept lease reaches its keeper, and a newer keeper of a lease finds the older ones.
 * Usually one keeper per lease; two for a moment when a holder resumed on this server before its
 * old stream was seen to be gone. A concurrent map of small immutable lists: keepers come and go
 * on gRPC and engine threads alike, and the lookup on every Extend takes no lock.
 */
final class KeptLeaseIndex {
  private record Key(String resource, String token) {}

  private final ConcurrentHashMap<Key, List<KeptLease>> byLease = new ConcurrentHashMap<>();

  void add(KeptLease lease) {
    byLease.compute(key(lease), (k, leases) -> {
      List<KeptLease> more = leases == null ? new ArrayList<>(1) : new ArrayList<>(leases);
      more.add(lease);
      return List.copyOf(more);
    });
  }

  /** The keepers of the same lease added before {@code lease} and still here. */
  List<KeptLease> before(KeptLease lease) {
    List<KeptLease> leases = byLease.get(key(lease));
    if (leases == null) {
      return List.of();
    }
    int at = leases.indexOf(lease);
    return at <= 0 ? List.of() : leases.subList(0, at);
  }

  void remove(KeptLease lease) {
    byLease.computeIfPresent(key(lease), (k, leases) -> {
      List<KeptLease> fewer = new ArrayList<>(leases);
      fewer.remove(lease);
      return fewer.isEmpty() ? null : List.copyOf(fewer);
    });
  }

  void forEach(String resource, String token, Consumer<KeptLease> action) {
    List<KeptLease> leases = byLease.get(new Key(resource, token));
    if (leases != null) {
      leases.forEach(action);
    }
  }

  int size() {
    return byLease.size();
  }

  private static Key key(KeptLease lease) {
    return new Key(lease.resource(), lease.token());
  }
}
