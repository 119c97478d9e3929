package dev.redlockd.it.chaos;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Everything the clients and the protected resources saw during a run. Lock-free queues: 64+
 * client threads append at once and nothing reads until the run is over.
 */
final class History {
  private final Queue<AcquireCall> acquires = new ConcurrentLinkedQueue<>();
  private final Queue<CriticalSection> sections = new ConcurrentLinkedQueue<>();
  private final Queue<ReleaseCall> releases = new ConcurrentLinkedQueue<>();
  private final Queue<Write> writes = new ConcurrentLinkedQueue<>();
  private final Queue<String> clientErrors = new ConcurrentLinkedQueue<>();
  private final Map<String, AtomicLong> leasesLost = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> extendOutcomes = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> expiredOnArrival = new ConcurrentHashMap<>();

  void acquire(AcquireCall call) {
    acquires.add(call);
  }

  void section(CriticalSection section) {
    sections.add(section);
  }

  void release(ReleaseCall call) {
    releases.add(call);
  }

  void write(Write write) {
    writes.add(write);
  }

  /** A lease its holder heard was lost (stream ended, or its local deadline passed unrenewed). */
  void leaseLost(ClientKind kind, Status.Code code) {
    leasesLost.computeIfAbsent(kind + " " + code, k -> new AtomicLong()).incrementAndGet();
  }

  void extend(Status.Code code) {
    extendOutcomes.computeIfAbsent(code.name(), k -> new AtomicLong()).incrementAndGet();
  }

  /**
   * A grant that was already past its holder's local deadline when the holder first looked (a
   * waiting Acquire granted after longer than the validity): the holder never used it.
   */
  void expiredOnArrival(ClientKind kind) {
    expiredOnArrival.computeIfAbsent(kind.name(), k -> new AtomicLong()).incrementAndGet();
  }

  /** Something a client did not expect at all (an exception type or status the contract does not name). */
  void clientError(String what) {
    clientErrors.add(what);
  }

  List<AcquireCall> acquires() {
    return new ArrayList<>(acquires);
  }

  List<CriticalSection> sections() {
    return new ArrayList<>(sections);
  }

  List<ReleaseCall> releases() {
    return new ArrayList<>(releases);
  }

  /** In the order the resources handled them (per resource; each resource appends under its own lock). */
  List<Write> writes() {
    return new ArrayList<>(writes);
  }

  List<String> clientErrors() {
    return new ArrayList<>(clientErrors);
  }

  Map<String, Long> leasesLost() {
    return snapshot(leasesLost);
  }

  Map<String, Long> extendOutcomes() {
    return snapshot(extendOutcomes);
  }

  Map<String, Long> expiredOnArrival() {
    return snapshot(expiredOnArrival);
  }

  Map<ClientKind, Long> grantsByKind() {
    Map<ClientKind, Long> counts = new EnumMap<>(ClientKind.class);
    for (ClientKind kind : ClientKind.values()) {
      counts.put(kind, 0L);
    }
    for (AcquireCall call : acquires) {
      if (call.granted()) {
        counts.merge(call.kind(), 1L, Long::sum);
      }
    }
    return counts;
  }

  private static Map<String, Long> snapshot(Map<String, AtomicLong> counters) {
    Map<String, Long> out = new java.util.TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }
}
