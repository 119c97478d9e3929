package dev.redlockd.it.chaos;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The leases currently kept alive over a KeepAlive stream, by the replica that carries the
 * stream, so the nemesis can kill a replica while some are open and the report can time how
 * long those resources took to change hands.
 */
final class OpenStreams {
  private record Open(int replica, String resource) {}

  private final Map<Long, Open> byLease = new ConcurrentHashMap<>();

  void opened(long leaseId, int replica, String resource) {
    byLease.put(leaseId, new Open(replica, resource));
  }

  void closed(long leaseId) {
    byLease.remove(leaseId);
  }

  Set<String> resourcesOn(int replica) {
    return byLease.values().stream()
        .filter(o -> o.replica() == replica)
        .map(Open::resource)
        .collect(Collectors.toUnmodifiableSet());
  }
}
