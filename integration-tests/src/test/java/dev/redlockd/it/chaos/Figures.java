package dev.redlockd.it.chaos;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The availability side of a run, measured from the same history the checker reads.
 *
 * @param acquiresByCode every Acquire call by how it ended
 * @param callsWithQuorum Acquire calls during all of which a quorum of nodes was free of any
 *     fault (slow included) and the replica called was up
 * @param answeredWithQuorum of those, the ones the service answered: granted, or ABORTED
 *     because someone else held the lock
 * @param grantedWithQuorum of those, the ones granted
 * @param handoffAfterReleaseMs per confirmed release, the time from sending it to the next
 *     grant of that resource arriving at its client
 * @param handoffAfterReplicaKillMs per resource kept alive on a replica when it was killed, the
 *     time from the SIGKILL to the next grant of that resource
 */
record Figures(Map<String, Long> acquiresByCode, long callsWithQuorum, long answeredWithQuorum,
    long grantedWithQuorum, List<Double> handoffAfterReleaseMs, List<Double> handoffAfterReplicaKillMs,
    long sections, long sectionsOverran, long writesAccepted, long writesRefused, long writesRefusedStale) {

  static Figures of(History history, FaultTimeline timeline, int nodes, int quorum) {
    List<AcquireCall> acquires = history.acquires();
    Map<String, Long> byCode = new TreeMap<>();
    long withQuorum = 0;
    long answered = 0;
    long granted = 0;
    for (AcquireCall a : acquires) {
      byCode.merge(a.code().name(), 1L, Long::sum);
      boolean quorumFree = timeline.nodesImpairedDuring(a.sendNanos(), a.endNanos()) <= nodes - quorum;
      if (quorumFree && !timeline.replicaDownDuring(a.replica(), a.sendNanos(), a.endNanos())) {
        withQuorum++;
        if (a.granted() || a.code() == Status.Code.ABORTED) {
          answered++;
        }
        if (a.granted()) {
          granted++;
        }
      }
    }
    Map<String, List<AcquireCall>> grants = grantsByResource(acquires);

    List<Double> afterRelease = new ArrayList<>();
    for (ReleaseCall r : history.releases()) {
      if (r.released()) {
        AcquireCall next = firstArrivingAtOrAfter(grants.get(r.resource()), r.sendNanos());
        if (next != null) {
          afterRelease.add(millis(next.endNanos() - r.sendNanos()));
        }
      }
    }
    List<Double> afterKill = new ArrayList<>();
    for (FaultTimeline.ReplicaOutage o : timeline.replicaOutages()) {
      for (String resource : o.keptResources()) {
        AcquireCall next = firstArrivingAtOrAfter(grants.get(resource), o.killedNanos());
        if (next != null) {
          afterKill.add(millis(next.endNanos() - o.killedNanos()));
        }
      }
    }

    List<CriticalSection> sections = history.sections();
    List<Write> writes = history.writes();
    long accepted = writes.stream().filter(Write::accepted).count();
    long refusedStale = writes.stream().filter(w -> !w.accepted() && !w.writerBelievedValid()).count();
    return new Figures(byCode, withQuorum, answered, granted, sorted(afterRelease), sorted(afterKill),
        sections.size(), sections.stream().filter(CriticalSection::overran).count(), accepted,
        writes.size() - accepted, refusedStale);
  }

  long acquireCalls() {
    return acquiresByCode.values().stream().mapToLong(Long::longValue).sum();
  }

  double answeredShareWithQuorum() {
    return callsWithQuorum == 0 ? Double.NaN : (double) answeredWithQuorum / callsWithQuorum;
  }

  double grantedShareWithQuorum() {
    return callsWithQuorum == 0 ? Double.NaN : (double) grantedWithQuorum / callsWithQuorum;
  }

  /** Nearest-rank percentile of a sorted list; NaN when it is empty. */
  static double percentile(List<Double> sorted, double p) {
    if (sorted.isEmpty()) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
  }

  private static Map<String, List<AcquireCall>> grantsByResource(List<AcquireCall> acquires) {
    Map<String, List<AcquireCall>> out = new HashMap<>();
    for (AcquireCall a : acquires) {
      if (a.granted()) {
        out.computeIfAbsent(a.resource(), k -> new ArrayList<>()).add(a);
      }
    }
    out.values().forEach(l -> l.sort(Comparator.comparingLong(AcquireCall::endNanos)));
    return out;
  }

  /** The first grant (by arrival) at or after {@code nanos}, in a list sorted by arrival. */
  private static AcquireCall firstArrivingAtOrAfter(List<AcquireCall> byArrival, long nanos) {
    if (byArrival == null) {
      return null;
    }
    int lo = 0;
    int hi = byArrival.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (byArrival.get(mid).endNanos() < nanos) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo < byArrival.size() ? byArrival.get(lo) : null;
  }

  private static List<Double> sorted(List<Double> values) {
    List<Double> copy = new ArrayList<>(values);
    copy.sort(Double::compare);
    return List.copyOf(copy);
  }

  private static double millis(long nanos) {
    return nanos / (double) TimeUnit.MILLISECONDS.toNanos(1);
  }
}
