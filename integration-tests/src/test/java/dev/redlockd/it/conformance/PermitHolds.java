package dev.redlockd.it.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The permits scenario's holds, as the runner's {@code permit} lines report them, and what they
 * must show: never more than N at once, every permit one of the N, and per permit one holder
 * after another with rising fencing tokens. A reported interval lies inside its grant (its
 * start is read after the grant, its end before the release), so overlapping intervals are
 * holders that overlapped.
 */
final class PermitHolds {
  record Hold(int worker, int permit, long fencingToken, long startNs, long endNs) {
    static Hold of(JsonObject event) {
      return new Hold(event.get("worker").getAsInt(), event.get("permit").getAsInt(),
          Long.parseUnsignedLong(event.get("fencing_token").getAsString()),
          Long.parseLong(event.get("start_ns").getAsString()), Long.parseLong(event.get("end_ns").getAsString()));
    }
  }

  private final int permits;
  private final List<Hold> holds = new ArrayList<>();

  PermitHolds(int permits) {
    this.permits = permits;
  }

  void add(JsonObject event) {
    holds.add(Hold.of(event));
  }

  void add(Hold hold) {
    holds.add(hold);
  }

  int size() {
    return holds.size();
  }

  /** The distinct permits held, in order. */
  List<Integer> permitsSeen() {
    return holds.stream().map(Hold::permit).distinct().sorted().toList();
  }

  /** The most intervals that overlap at any instant (an end before a start at the same instant). */
  int mostAtOnce() {
    record Edge(long at, int delta) {}
    List<Edge> edges = new ArrayList<>();
    for (Hold h : holds) {
      edges.add(new Edge(h.startNs(), 1));
      edges.add(new Edge(h.endNs(), -1));
    }
    edges.sort(Comparator.comparingLong(Edge::at).thenComparingInt(Edge::delta));
    int holding = 0;
    int most = 0;
    for (Edge e : edges) {
      holding += e.delta();
      most = Math.max(most, holding);
    }
    return most;
  }

  /** Fails unless the holds kept the semaphore's bound and each permit's order. */
  void check() {
    assertThat(holds).allSatisfy(h -> {
      assertThat(h.permit()).as("permit of %s", h).isBetween(1, permits);
      assertThat(h.endNs()).as("end of %s", h).isGreaterThanOrEqualTo(h.startNs());
    });
    assertThat(mostAtOnce()).as("holders at once, of %d permits", permits).isLessThanOrEqualTo(permits);
    for (int permit = 1; permit <= permits; permit++) {
      int k = permit;
      List<Hold> ofPermit = holds.stream().filter(h -> h.permit() == k)
          .sorted(Comparator.comparingLong(Hold::startNs)).toList();
      for (int i = 1; i < ofPermit.size(); i++) {
        Hold before = ofPermit.get(i - 1);
        Hold next = ofPermit.get(i);
        assertThat(next.startNs()).as("permit %d: %s began before %s ended", k, next, before)
            .isGreaterThanOrEqualTo(before.endNs());
        assertThat(Long.compareUnsigned(next.fencingToken(), before.fencingToken()))
            .as("permit %d: fencing tokens rise in the order the holds began: %s then %s", k, before, next)
            .isPositive();
      }
    }
  }
}
