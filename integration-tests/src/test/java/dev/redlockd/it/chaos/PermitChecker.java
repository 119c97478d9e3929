package dev.redlockd.it.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the semaphore phase's history: at no instant more than N sections overlap, every
 * permit is one of 1..N, no two sections of one permit overlap, and per permit the fencing
 * tokens strictly rise in start order.
 */
final class PermitChecker {
  private final int permits;

  PermitChecker(int permits) {
    this.permits = permits;
  }

  List<Violation> check(List<PermitSection> sections) {
    List<Violation> found = new ArrayList<>();
    List<PermitSection> byStart = new ArrayList<>(sections);
    byStart.sort(Comparator.comparingLong(PermitSection::start));
    // The most sections that overlap always overlap at the start of one of them.
    for (int i = 0; i < byStart.size(); i++) {
      PermitSection s = byStart.get(i);
      if (s.permit() < 1 || s.permit() > permits) {
        found.add(new Violation(Violation.Kind.PERMITS_OVER_LIMIT, s.worker() + " was granted permit " + s.permit()
            + " of a semaphore of " + permits));
      }
      List<PermitSection> open = new ArrayList<>();
      for (int j = 0; j < i; j++) {
        if (byStart.get(j).end() > s.start()) {
          open.add(byStart.get(j));
        }
      }
      if (open.size() + 1 > permits) {
        found.add(new Violation(Violation.Kind.PERMITS_OVER_LIMIT, (open.size() + 1) + " holders of a semaphore of "
            + permits + " at once: " + s + " while " + open));
      }
    }
    Map<Integer, PermitSection> lastOfPermit = new HashMap<>();
    Map<Integer, PermitSection> longestOfPermit = new HashMap<>();
    for (PermitSection s : byStart) {
      // The earlier section of this permit that lasted longest: if any overlaps s, it does.
      PermitSection longest = longestOfPermit.get(s.permit());
      if (longest != null && longest.end() > s.start()) {
        found.add(new Violation(Violation.Kind.OVERLAP, "permit " + s.permit() + " held by two at once: " + longest
            + " and " + s));
      }
      if (longest == null || s.end() > longest.end()) {
        longestOfPermit.put(s.permit(), s);
      }
      PermitSection before = lastOfPermit.put(s.permit(), s);
      if (before != null && Long.compareUnsigned(s.fence(), before.fence()) <= 0) {
        found.add(new Violation(Violation.Kind.FENCE_ORDER, "permit " + s.permit() + ": fencing token " + s.fence()
            + " of " + s + " is not above " + before.fence() + " of the earlier " + before));
      }
    }
    return found;
  }
}
