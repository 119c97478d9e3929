package dev.redlockd.it.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the nemesis did, as intervals on this JVM's {@code System.nanoTime()}. Each interval is
 * recorded conservatively: it starts only once the fault is certainly in force (the signal was
 * delivered, the process has exited) and ends before the heal is sent, so "down throughout" is
 * never claimed for a moment when the node might have answered.
 */
final class FaultTimeline {
  enum Kind {
    /** SIGSTOP: holds its sockets and answers nothing. */
    FROZEN,
    /** Killed, not yet restarted. */
    DEAD,
    /**
     * Restarted empty: it cannot vote until its quarantine (the server's --max-ttl, counted from
     * when a server first saw it blank, which is after the restart) is served. The interval is
     * the shortest that quarantine can be.
     */
    QUARANTINED,
    /** Answers, but late (CLIENT PAUSE bursts): may miss the node timeout. Still votes. */
    SLOW
  }

  record Outage(int node, Kind kind, long fromNanos, long toNanos) {
    boolean preventsVoting() {
      return kind != Kind.SLOW;
    }

    boolean overlaps(long from, long to) {
      return fromNanos < to && from < toNanos;
    }
  }

  /** A server replica killed with SIGKILL and started again; {@code keptResources} had a KeepAlive holder on it. */
  record ReplicaOutage(int replica, long killedNanos, long restartedNanos, Set<String> keptResources) {
    boolean overlaps(long from, long to) {
      return killedNanos < to && from < restartedNanos;
    }
  }

  private final List<Outage> outages = new CopyOnWriteArrayList<>();
  private final List<ReplicaOutage> replicaOutages = new CopyOnWriteArrayList<>();

  void node(int node, Kind kind, long fromNanos, long toNanos) {
    if (toNanos > fromNanos) {
      outages.add(new Outage(node, kind, fromNanos, toNanos));
    }
  }

  void replica(ReplicaOutage outage) {
    replicaOutages.add(outage);
  }

  List<Outage> outages() {
    return List.copyOf(outages);
  }

  List<ReplicaOutage> replicaOutages() {
    return List.copyOf(replicaOutages);
  }

  /**
   * How many nodes could not vote at any moment of [from, to]. Consecutive outages of one node
   * (killed, then quarantined) are joined first.
   */
  int nodesSilentThroughout(long from, long to) {
    Set<Integer> silent = new HashSet<>();
    for (int node : nodes()) {
      for (long[] span : votingGaps(node)) {
        if (span[0] <= from && to <= span[1]) {
          silent.add(node);
        }
      }
    }
    return silent.size();
  }

  /** How many nodes had any fault (slow included) at some moment of [from, to]. */
  int nodesImpairedDuring(long from, long to) {
    Set<Integer> impaired = new HashSet<>();
    for (Outage o : outages) {
      if (o.overlaps(from, to)) {
        impaired.add(o.node());
      }
    }
    return impaired.size();
  }

  boolean replicaDownDuring(int replica, long from, long to) {
    return replicaOutages.stream().anyMatch(o -> o.replica() == replica && o.overlaps(from, to));
  }

  private Set<Integer> nodes() {
    Set<Integer> nodes = new HashSet<>();
    outages.forEach(o -> nodes.add(o.node()));
    return nodes;
  }

  /** The node's non-voting intervals, sorted and merged where they touch or overlap. */
  private List<long[]> votingGaps(int node) {
    List<Outage> own = new ArrayList<>();
    for (Outage o : outages) {
      if (o.node() == node && o.preventsVoting()) {
        own.add(o);
      }
    }
    own.sort(Comparator.comparingLong(Outage::fromNanos));
    List<long[]> merged = new ArrayList<>();
    for (Outage o : own) {
      long[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (last != null && o.fromNanos() <= last[1]) {
        last[1] = Math.max(last[1], o.toNanos());
      } else {
        merged.add(new long[] {o.fromNanos(), o.toNanos()});
      }
    }
    return merged;
  }
}
