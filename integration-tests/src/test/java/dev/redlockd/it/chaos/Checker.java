package dev.redlockd.it.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Checks a run's history against what the lock promises. Pure logic over recorded intervals
 * (all on one {@code System.nanoTime()}), so it is tested on its own with hand-made histories.
 */
final class Checker {
  /** Enough examples of one kind to look into it; the count is always complete. */
  private static final int EXAMPLES = 5;

  private final int quorum;
  private final long originNanos;

  /**
   * @param quorum nodes needed to grant (N/2+1)
   * @param originNanos the run's start, to print times as seconds into the run
   */
  Checker(int quorum, long originNanos) {
    this.quorum = quorum;
    this.originNanos = originNanos;
  }

  List<Violation> check(History history, FaultTimeline timeline) {
    List<Violation> found = new ArrayList<>();
    found.addAll(overlaps(history.sections()));
    found.addAll(fenceOrder(history.acquires()));
    found.addAll(writes(history.writes()));
    found.addAll(grantsWithoutQuorum(history.acquires(), timeline));
    return found;
  }

  /**
   * Two sections on one resource overlap when s1 < e2 and s2 < e1. Each section counts up to
   * the earlier of its end and its holder's own deadline: a holder paused past its lease is
   * excused for the time past its deadline (fencing covers that), but not for the time before,
   * when it was entitled to rely on the lock. A holder that ended in time counts whole.
   */
  List<Violation> overlaps(List<CriticalSection> sections) {
    List<Violation> found = new ArrayList<>();
    int count = 0;
    for (List<CriticalSection> same : byResource(sections, CriticalSection::resource).values()) {
      List<CriticalSection> relied = same.stream()
          .filter(CriticalSection::reliedOnTheLock)
          .sorted(Comparator.comparingLong(CriticalSection::startNanos))
          .toList();
      // Sweep by start: a section overlaps an earlier-starting one iff it starts before the
      // latest end seen so far.
      CriticalSection latest = null;
      for (CriticalSection s : relied) {
        if (latest != null && s.startNanos() < latest.reliedUntilNanos() && s.leaseId() != latest.leaseId()) {
          if (count++ < EXAMPLES) {
            found.add(new Violation(Violation.Kind.OVERLAP, String.format(
                "%s: %s (fence %s) relied on it from %s to %s; %s (fence %s) from %s to %s",
                s.resource(), describe(latest), Long.toUnsignedString(latest.fence()), at(latest.startNanos()),
                at(latest.reliedUntilNanos()), describe(s), Long.toUnsignedString(s.fence()), at(s.startNanos()),
                at(s.reliedUntilNanos()))));
          }
        }
        if (latest == null || s.reliedUntilNanos() > latest.reliedUntilNanos()) {
          latest = s;
        }
      }
    }
    return withCount(found, count, Violation.Kind.OVERLAP);
  }

  /**
   * Fencing tokens rise in real-time order: a grant whose Acquire was sent after another grant
   * had arrived must carry a higher token. Grants whose calls overlap in time may be in either
   * order and are not compared.
   */
  List<Violation> fenceOrder(List<AcquireCall> acquires) {
    List<Violation> found = new ArrayList<>();
    int count = 0;
    List<AcquireCall> grants = acquires.stream().filter(AcquireCall::granted).toList();
    for (List<AcquireCall> same : byResource(grants, AcquireCall::resource).values()) {
      List<AcquireCall> byArrival = new ArrayList<>(same);
      byArrival.sort(Comparator.comparingLong(AcquireCall::endNanos));
      List<AcquireCall> bySend = new ArrayList<>(same);
      bySend.sort(Comparator.comparingLong(AcquireCall::sendNanos));
      AcquireCall highest = null;
      int arrived = 0;
      for (AcquireCall later : bySend) {
        while (arrived < byArrival.size() && byArrival.get(arrived).endNanos() < later.sendNanos()) {
          AcquireCall a = byArrival.get(arrived++);
          if (highest == null || Long.compareUnsigned(a.fence(), highest.fence()) > 0) {
            highest = a;
          }
        }
        if (highest != null && Long.compareUnsigned(later.fence(), highest.fence()) <= 0) {
          if (count++ < EXAMPLES) {
            found.add(new Violation(Violation.Kind.FENCE_ORDER, String.format(
                "%s: lease %d granted at %s with fence %s; lease %d asked for at %s got fence %s",
                later.resource(), highest.leaseId(), at(highest.endNanos()), Long.toUnsignedString(highest.fence()),
                later.leaseId(), at(later.sendNanos()), Long.toUnsignedString(later.fence()))));
          }
        }
      }
    }
    return withCount(found, count, Violation.Kind.FENCE_ORDER);
  }

  /**
   * Per resource, in the order the resource handled them: every accepted write carries a
   * fencing token above the highest accepted before (or equal to it, from the same lease); and
   * no holder within its own deadline is refused, since a refusal means a newer lease wrote
   * while this one was still entitled to the lock.
   */
  List<Violation> writes(List<Write> writes) {
    List<Violation> found = new ArrayList<>();
    int stale = 0;
    int refused = 0;
    for (List<Write> same : byResource(writes, Write::resource).values()) {
      Write highest = null;
      for (Write w : same) {
        int order = highest == null ? 1 : Long.compareUnsigned(w.fence(), highest.fence());
        if (w.accepted()) {
          if (order < 0 || (order == 0 && w.leaseId() != highest.leaseId())) {
            if (stale++ < EXAMPLES) {
              found.add(new Violation(Violation.Kind.STALE_WRITE_ACCEPTED, String.format(
                  "%s: lease %d wrote with fence %s at %s after lease %d had written with fence %s",
                  w.resource(), w.leaseId(), Long.toUnsignedString(w.fence()), at(w.atNanos()),
                  highest.leaseId(), Long.toUnsignedString(highest.fence()))));
            }
          }
          if (order > 0) {
            highest = w;
          }
        } else if (w.writerBelievedValid()) {
          if (refused++ < EXAMPLES) {
            found.add(new Violation(Violation.Kind.VALID_WRITE_REFUSED, String.format(
                "%s: lease %d (fence %s) was refused at %s within its own deadline; lease %d (fence %s) had written",
                w.resource(), w.leaseId(), Long.toUnsignedString(w.fence()), at(w.atNanos()),
                highest == null ? -1 : highest.leaseId(),
                highest == null ? "none" : Long.toUnsignedString(highest.fence()))));
          }
        }
      }
    }
    found = withCount(found, stale, Violation.Kind.STALE_WRITE_ACCEPTED);
    return withCount(found, refused, Violation.Kind.VALID_WRITE_REFUSED);
  }

  /** No grant may come from a call during all of which a majority of nodes could not vote. */
  List<Violation> grantsWithoutQuorum(List<AcquireCall> acquires, FaultTimeline timeline) {
    List<Violation> found = new ArrayList<>();
    int count = 0;
    for (AcquireCall a : acquires) {
      if (!a.granted()) {
        continue;
      }
      int silent = timeline.nodesSilentThroughout(a.sendNanos(), a.endNanos());
      if (silent >= quorum) {
        if (count++ < EXAMPLES) {
          found.add(new Violation(Violation.Kind.GRANT_WITHOUT_QUORUM, String.format(
              "%s: lease %d granted by a call from %s to %s while %d nodes could not vote throughout",
              a.resource(), a.leaseId(), at(a.sendNanos()), at(a.endNanos()), silent)));
        }
      }
    }
    return withCount(found, count, Violation.Kind.GRANT_WITHOUT_QUORUM);
  }

  private static List<Violation> withCount(List<Violation> found, int count, Violation.Kind kind) {
    if (count > EXAMPLES) {
      found.add(new Violation(kind, "... " + (count - EXAMPLES) + " more of this kind (" + count + " in all)"));
    }
    return found;
  }

  private static <T> Map<String, List<T>> byResource(List<T> items, Function<T, String> resource) {
    return items.stream().collect(Collectors.groupingBy(resource, HashMap::new, Collectors.toList()));
  }

  private static String describe(CriticalSection s) {
    return s.holder() + " lease " + s.leaseId() + (s.overran() ? " (overran its deadline)" : "");
  }

  private String at(long nanos) {
    return String.format("%.3fs", (nanos - originNanos) / 1e9);
  }
}
