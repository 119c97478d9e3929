package dev.redlockd.it.conformance;

import com.google.gson.JsonObject;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.RespClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The belief oracle (clients/conformance/README.md, rule 2 of the product): while a runner
 * reports what its client believes of a lease or a leadership, the harness reads the remaining
 * time of the handle's key on every node itself, and no valid belief may outlast, by more than
 * {@link #TOLERANCE_MS}, what the quorum-th longest-holding node still holds.
 *
 * <p>A belief is dated by the runner's own reading of {@code CLOCK_MONOTONIC} (the clock of
 * Java's {@code System.nanoTime()} on Linux, which dates the nodes' readings here), taken after
 * it read the remaining time: counting the remaining time from then can only make the belief
 * look longer, never hide an excess, and the time a line spends in the pipe or waiting for the
 * reader does not count. The runner reads the clock before the remaining time too
 * ({@code mono_before_ns}): a runner held up between the two (a fresh-clone run's Java runner, for
 * 230 ms) made an honest belief look 230 ms longer, so a belief that fails only when counted from
 * the later reading, with more than 1 ms between the two, is not judged. A node's hold is read as (time of the reply + PTTL), which can only
 * make the node look longer-holding by the time between the node's answer and the reading of the
 * clock. A reading is dated both ways: the node answered after its request was sent and before
 * its reply was dated. A belief is held against each node's last reading answered before it and
 * first reading asked after it, whichever holds longer: a renewal that landed between the two
 * readings, or a release that followed the belief, cannot fail it; a belief that is wrong for
 * longer than one sampling interval (20 ms) is caught. A reading asked before the belief and
 * dated after it is neither: on a busy machine the sampler can be descheduled between the node's
 * answer and the clock reading, and such a reading, though dated after the belief, shows the node
 * as it was before it (a run failed four honest clients at once by 327-474 ms so: three nodes'
 * readings taken before a renewal landed, dated 81 ms late, taken for readings after it). A node that could not be read
 * since its last reading (frozen, or restarting) keeps that reading: nothing can be written to it
 * meanwhile. A node that simply was not read again before the release may have been renewed
 * after its last reading: its hold is unknown, and a quorum's hold that needs it cannot fail a
 * belief (it is not judged). The tolerance covers PTTL's
 * whole milliseconds and the nodes' wall clocks, by which Redis expires keys; a client that
 * follows the rules believes at least the drift allowance (2 ms + 1% of the ttl) less than the
 * nodes hold.
 */
final class BeliefOracle implements AutoCloseable {
  static final double TOLERANCE_MS = 10;
  private static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
  /**
   * A runner whose two clock readings around its client's remaining time lie further apart was
   * held up between them (a healthy read takes microseconds); see {@link #excessMs}.
   */
  private static final long HELD_UP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long ABSENT = Long.MIN_VALUE;
  /** A read that failed (the node frozen, restarting or gone): nothing was written to it since its last reading. */
  private static final long UNREADABLE = Long.MIN_VALUE + 1;
  /** A node's hold that the readings cannot bound: it may have been renewed after its last reading. */
  private static final long UNKNOWN = Long.MAX_VALUE - 1;

  /**
   * One belief or belief-end line of a runner, dated by the runner's CLOCK_MONOTONIC reading
   * ({@code atNanos}; a belief-end by when the harness read it).
   */
  record Belief(long atNanos, long beforeNanos, String handle, boolean end, boolean valid, double remainingMs,
      String defect) {
    /** A belief whose remaining time was read at {@code atNanos} exactly. */
    Belief(long atNanos, String handle, boolean end, boolean valid, double remainingMs, String defect) {
      this(atNanos, atNanos, handle, end, valid, remainingMs, defect);
    }

    /**
     * The belief in a runner's event, or null for any other event. A belief dated wrongly is kept
     * with its {@code defect}, which {@link #judge} fails on (this runs on the runner's reader thread).
     */
    static Belief of(JsonObject event, long readAtNanos) {
      String kind = event.has("event") ? event.get("event").getAsString() : "";
      String handle = event.has("handle") ? event.get("handle").getAsString() : "";
      return switch (kind) {
        case "belief" -> {
          String defect = null;
          long at = readAtNanos;
          if (!event.has("mono_ns")) {
            defect = "a belief without mono_ns (its CLOCK_MONOTONIC reading): " + event;
          } else {
            at = event.get("mono_ns").getAsLong();
            if (at > readAtNanos) {
              defect = "a belief dated " + (at - readAtNanos) / 1_000 + " us after the harness read it: "
                  + "its mono_ns is not CLOCK_MONOTONIC (" + event + ")";
            }
          }
          long before = event.has("mono_before_ns") ? event.get("mono_before_ns").getAsLong() : at;
          if (before > at) {
            defect = "a belief whose mono_before_ns comes after its mono_ns: " + event;
          }
          yield new Belief(at, before, handle, false, event.get("valid").getAsBoolean(),
              event.get("remaining_ms").getAsDouble(), defect);
        }
        case "belief-end" -> event.has("mono_ns")
            ? new Belief(Math.min(readAtNanos, event.get("mono_ns").getAsLong()), handle, true, false, 0, null)
            : new Belief(readAtNanos, handle, true, false, 0,
                "a belief-end without mono_ns (read before the release began): " + event);
        default -> null;
      };
    }

    /** This belief under its runner's name, as an oracle watching several runners at once keys its handles. */
    Belief of(String runner) {
      return new Belief(atNanos, beforeNanos, runner + " " + handle, end, valid, remainingMs, defect);
    }
  }

  /**
   * What the oracle found for one handle: the largest excess of a valid belief over the nodes,
   * how many beliefs it judged, and how many it could not (see {@link #judge}).
   */
  record Verdict(String handle, double largestExcessMs, int judged, int unjudged) {}

  /**
   * One node's reading of one key: when it was asked for and when it came back (the node answered
   * between the two), and until when the node holds the key (or ABSENT); or a read that failed at
   * {@code atNanos} (UNREADABLE).
   */
  private record Reading(long askedNanos, long atNanos, long holdsUntilNanos) {
    Reading(long atNanos, long holdsUntilNanos) {
      this(atNanos, atNanos, holdsUntilNanos);
    }

    boolean read() {
      return holdsUntilNanos != UNREADABLE;
    }
  }

  private final Map<String, String> keyByHandle;
  private final List<String> handles;
  private final int quorum;
  private final List<Integer> nodePorts;
  /** readings[node][handle index], each appended to by that node's sampler thread alone. */
  private final List<List<List<Reading>>> readings = new ArrayList<>();
  private final List<Thread> samplers = new ArrayList<>();
  /** One lock per node, held over each read of it: a freeze reads the node with no other read in flight. */
  private final List<Object> reads = new ArrayList<>();
  private volatile boolean running = true;

  /** Starts reading {@code keyByHandle}'s keys on every node (by port) every 20 ms. */
  BeliefOracle(List<Integer> nodePorts, int quorum, Map<String, String> keyByHandle) {
    this(nodePorts, quorum, keyByHandle, true);
  }

  private BeliefOracle(List<Integer> nodePorts, int quorum, Map<String, String> keyByHandle, boolean sampled) {
    this.keyByHandle = Map.copyOf(keyByHandle);
    this.handles = List.copyOf(keyByHandle.keySet());
    this.quorum = quorum;
    this.nodePorts = List.copyOf(nodePorts);
    for (int n = 0; n < nodePorts.size(); n++) {
      List<List<Reading>> perHandle = new ArrayList<>();
      for (int h = 0; h < handles.size(); h++) {
        perHandle.add(new ArrayList<>());
      }
      readings.add(perHandle);
      reads.add(new Object());
      if (!sampled) {
        continue;
      }
      int node = n;
      Thread sampler = new Thread(() -> sample(node), "belief-oracle-node-" + n);
      sampler.setDaemon(true);
      samplers.add(sampler);
      sampler.start();
    }
  }

  /** For a test of the judging alone: no node is read; readings come from {@link #recordReading}. */
  static BeliefOracle unsampled(int nodes, int quorum, String handle) {
    return new BeliefOracle(java.util.Collections.nCopies(nodes, 0), quorum, Map.of(handle, "key"), false);
  }

  /**
   * A reading of {@code node} at {@code atNanos}: holding the handle's key until {@code untilNanos}
   * (null: absent), or, with {@code readable} false, a read that failed.
   */
  void recordReading(int node, String handle, long atNanos, Long untilNanos, boolean readable) {
    recordReading(node, handle, atNanos, atNanos, untilNanos, readable);
  }

  /** {@link #recordReading(int, String, long, Long, boolean)} of a reading asked for at {@code askedNanos}. */
  void recordReading(int node, String handle, long askedNanos, long atNanos, Long untilNanos, boolean readable) {
    List<Reading> list = readings.get(node).get(handles.indexOf(handle));
    synchronized (list) {
      list.add(new Reading(askedNanos, atNanos, !readable ? UNREADABLE : untilNanos == null ? ABSENT : untilNanos));
    }
  }

  private void sample(int node) {
    List<List<Reading>> perHandle = readings.get(node);
    RespClient client = null;
    while (running) {
      long began = System.nanoTime();
      try {
        if (client == null) {
          client = new RespClient("127.0.0.1", nodePorts.get(node), 100);
        }
        synchronized (reads.get(node)) {
          read(client, perHandle);
        }
      } catch (IOException frozenOrGone) {
        // Its last readings stand; the reply stream is out of step, so connect anew.
        unreadable(perHandle);
        closeQuietly(client);
        client = null;
      }
      long left = began + SAMPLE_NANOS - System.nanoTime();
      if (left > 0) {
        try {
          TimeUnit.NANOSECONDS.sleep(left);
        } catch (InterruptedException e) {
          break;
        }
      }
    }
    closeQuietly(client);
  }

  /** A read of the node that failed now: nothing can have been written to it since its last reading. */
  private static void unreadable(List<List<Reading>> perHandle) {
    long at = System.nanoTime();
    for (List<Reading> list : perHandle) {
      synchronized (list) {
        list.add(new Reading(at, UNREADABLE));
      }
    }
  }

  /**
   * One reading of every handle's key on one node, in one pipeline: with every language's
   * runner watched at once, a round trip per key would stretch the sampling interval.
   */
  private void read(RespClient client, List<List<Reading>> perHandle) throws IOException {
    long asked = System.nanoTime();
    for (String handle : handles) {
      client.send("PTTL", keyByHandle.get(handle));
    }
    for (int h = 0; h < handles.size(); h++) {
      Object pttl = client.receive();
      long at = System.nanoTime();
      long ms = pttl instanceof Long l ? l : -2;
      long until = ms >= 0 ? at + TimeUnit.MILLISECONDS.toNanos(ms) : ms == -1 ? Long.MAX_VALUE : ABSENT;
      List<Reading> list = perHandle.get(h);
      synchronized (list) {
        list.add(new Reading(asked, at, until));
      }
    }
  }

  /**
   * Reads every node once now, from the calling thread, besides the samplers: the harness calls
   * it when a runner reaches an await point, so that a lease held only while the harness checks
   * it still has a reading between its first belief and its release.
   */
  void sampleNow() {
    for (int n = 0; n < nodePorts.size(); n++) {
      sampleNow(n);
    }
  }

  private void sampleNow(int node) {
    synchronized (reads.get(node)) {
      try (RespClient client = new RespClient("127.0.0.1", nodePorts.get(node), 100)) {
        read(client, readings.get(node));
      } catch (IOException frozenOrGone) {
        unreadable(readings.get(node)); // as for the samplers: its last readings stand
      }
    }
  }

  /**
   * SIGSTOPs {@code nodes} (indexes into both the cluster and this oracle's ports) so that each
   * one's last reading is what it holds while stopped: the node first stops taking writes
   * ({@code CLIENT PAUSE WRITE}, which holds scripts too), is then read, and only then stopped.
   * Without the pause a renewal could land between a node's last reading and its SIGSTOP, unseen,
   * and the oracle would fail the client that believed it (a loaded run had 41 ms between two
   * nodes' last readings and their stops, and failed an honest client by 325 ms).
   */
  void freeze(RedisCluster cluster, int... nodes) {
    for (int n : nodes) {
      // No other read of the node in flight meanwhile: one sent before the pause but taken in
      // after this one would date the state before the pause as the later reading.
      synchronized (reads.get(n)) {
        // Long enough to cover the read and the signal, short enough to lapse by itself if a thaw is missed.
        cluster.call(n, "CLIENT", "PAUSE", "2000", "WRITE");
        sampleNow(n);
        cluster.pause(n);
      }
    }
  }

  /** SIGCONT of frozen nodes, and their writes let through again. */
  static void thaw(RedisCluster cluster, int... nodes) {
    cluster.resume(nodes);
    for (int n : nodes) {
      cluster.call(n, "CLIENT", "UNPAUSE");
    }
  }

  /** Until when {@code node}'s last reading of the handle's key showed it held (System.nanoTime), or null if absent or never read. */
  Long lastHoldUntil(int node, String handle) {
    List<Reading> list = readings.get(node).get(handles.indexOf(handle));
    synchronized (list) {
      for (int i = list.size() - 1; i >= 0; i--) {
        Reading r = list.get(i);
        if (r.read()) {
          return r.holdsUntilNanos() == ABSENT ? null : r.holdsUntilNanos();
        }
      }
    }
    return null;
  }

  /**
   * Judges every belief of every handle; fails on an excess over the tolerance, on a belief
   * after its handle's belief-end, and on a handle in {@code required} with fewer than
   * {@code minimum} judged beliefs or no belief-end.
   *
   * <p>A reading after the handle's belief-end may show the release, so only readings before it
   * count. A belief whose only reading after it came later, and whose reading before it falls
   * short, cannot be judged (a renewal and the release both landed between two readings) and is
   * counted apart; the samplers read every 20 ms and {@link #sampleNow} at every await point, so
   * this is at most the last belief or two before a release.
   */
  List<Verdict> judge(List<Belief> beliefs, List<String> required, int minimum) {
    List<Verdict> verdicts = new ArrayList<>();
    for (String handle : handles) {
      int h = handles.indexOf(handle);
      long endAt = Long.MAX_VALUE;
      boolean ended = false;
      for (Belief b : beliefs) {
        if (b.handle().equals(handle)) {
          if (ended) {
            throw new AssertionError("a " + handle + " belief came after its belief-end");
          }
          if (b.defect() != null) {
            throw new AssertionError(b.defect());
          }
          if (b.end()) {
            ended = true;
            endAt = b.atNanos();
          }
        }
      }
      double largest = Double.NEGATIVE_INFINITY;
      int judged = 0;
      int unjudged = 0;
      Belief worst = null;
      Belief first = null;
      for (Belief b : beliefs) {
        if (!b.handle().equals(handle) || b.end() || !b.valid()) {
          continue;
        }
        first = first == null ? b : first;
        double excess = excessMs(h, b, endAt);
        if (Double.isNaN(excess)) {
          unjudged++;
          continue;
        }
        judged++;
        if (excess > largest) {
          largest = excess;
          worst = b;
        }
      }
      if (required.contains(handle)) {
        if (judged < minimum) {
          throw new AssertionError("the runner reported " + judged + " valid " + handle + " beliefs the oracle could "
              + "judge (" + unjudged + " it could not), fewer than " + minimum
              + ": it must report every 20 ms while it holds the " + handle);
        }
        if (!ended) {
          throw new AssertionError("the runner never ended its " + handle + " beliefs (belief-end)");
        }
      }
      if (judged > 0 && largest > TOLERANCE_MS) {
        throw new AssertionError(String.format("the client believed its %s valid %.1f ms longer than a quorum of "
            + "nodes held its key (tolerance %.0f ms): it reported %.1f ms remaining, %.1f ms after its first "
            + "valid belief; each node's hold then, ms from the belief: %s", handle, largest, TOLERANCE_MS,
            worst.remainingMs(), (worst.atNanos() - first.atNanos()) / 1e6, holdsAround(h, worst, endAt)));
      }
      verdicts.add(new Verdict(handle, judged == 0 ? Double.NaN : largest, judged, unjudged));
    }
    return verdicts;
  }

  /**
   * A node's last reading answered at or before {@code at}, its first asked for at or after
   * {@code at} and answered before {@code endAt}, and its first failed read after that last
   * reading (before {@code endAt}), or nulls. A reading asked for before {@code at} and dated
   * after it may show the node from either side of {@code at}: it is neither.
   */
  private Reading[] around(List<Reading> list, long at, long endAt) {
    Reading before = null;
    Reading after = null;
    synchronized (list) {
      for (Reading r : list) { // sampleNow's readings may sit out of order among the sampler's
        if (!r.read()) {
          continue;
        }
        if (r.atNanos() <= at) {
          if (before == null || r.atNanos() > before.atNanos()) {
            before = r;
          }
        } else if (r.askedNanos() >= at && r.atNanos() < endAt && (after == null || r.atNanos() < after.atNanos())) {
          after = r;
        }
      }
      Reading failed = null;
      long since = before == null ? Long.MIN_VALUE : before.atNanos();
      for (Reading r : list) {
        if (!r.read() && r.atNanos() > since && r.atNanos() < endAt
            && (failed == null || r.atNanos() < failed.atNanos())) {
          failed = r;
        }
      }
      return new Reading[] {before, after, failed};
    }
  }

  /** For a failure report: each node's readings just before and after the belief, as ms of hold left from it. */
  private String holdsAround(int handle, Belief b, long endAt) {
    StringBuilder out = new StringBuilder();
    for (int n = 0; n < readings.size(); n++) {
      Reading[] pair = around(readings.get(n).get(handle), b.atNanos(), endAt);
      out.append(String.format("[node %d: before %s, after %s] ", n, describe(pair[0], b), describe(pair[1], b)));
    }
    return out.toString().strip();
  }

  private static String describe(Reading r, Belief b) {
    if (r == null) {
      return "none";
    }
    String hold = r.holdsUntilNanos() == ABSENT ? "absent"
        : String.format("%.1f", (r.holdsUntilNanos() - b.atNanos()) / 1e6);
    return String.format("%s (asked %s, answered %s)", hold, relative(r.askedNanos(), b), relative(r.atNanos(), b));
  }

  private static String relative(long nanos, Belief b) {
    return String.format("%.1f ms %s", Math.abs(nanos - b.atNanos()) / 1e6, nanos <= b.atNanos() ? "earlier" : "later");
  }

  /**
   * How much longer the belief runs than the quorum-th longest hold among the nodes, in ms; NaN
   * when that cannot be told (see {@link #judge}).
   */
  private double excessMs(int handle, Belief b, long endAt) {
    long[] holds = new long[readings.size()];
    boolean anyAfter = false;
    for (int n = 0; n < readings.size(); n++) {
      Reading[] pair = around(readings.get(n).get(handle), b.atNanos(), endAt);
      long before = pair[0] == null ? ABSENT : pair[0].holdsUntilNanos();
      if (pair[1] != null) {
        anyAfter = true;
        holds[n] = Math.max(before, pair[1].holdsUntilNanos());
      } else if (pair[2] != null || pair[0] == null) {
        holds[n] = before; // unreadable since (nothing written to it), or never held it
      } else {
        holds[n] = UNKNOWN; // read fine before, not read again before the release: renewed unseen?
      }
    }
    Arrays.sort(holds);
    long quorumHolds = holds[holds.length - quorum];
    if (quorumHolds == UNKNOWN) {
      return Double.NaN; // a quorum's hold needs a node not read between the belief and the release
    }
    long believedUntil = b.atNanos() + (long) (b.remainingMs() * 1e6);
    if (quorumHolds == ABSENT || believedUntil > quorumHolds) {
      if (!anyAfter) {
        return Double.NaN; // no reading between it and the release: a renewal may have landed unseen
      }
      if (quorumHolds == ABSENT) {
        return Double.POSITIVE_INFINITY;
      }
    }
    double excess = (believedUntil - quorumHolds) / 1e6;
    if (excess > TOLERANCE_MS && b.atNanos() - b.beforeNanos() > HELD_UP_NANOS) {
      // The runner was held up around its client's clock reading: the client read it no earlier
      // than beforeNanos. Counted from then the belief may be within the nodes' hold; if so it
      // cannot be told apart from an honest one (not judged), and if not it fails by that much.
      double atTheEarliest = (b.beforeNanos() + (long) (b.remainingMs() * 1e6) - quorumHolds) / 1e6;
      return atTheEarliest <= TOLERANCE_MS ? Double.NaN : atTheEarliest;
    }
    return excess;
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    for (Thread t : samplers) {
      t.join(2_000);
    }
  }

  private static void closeQuietly(RespClient client) {
    if (client != null) {
      try {
        client.close();
      } catch (IOException ignored) {
        // already broken
      }
    }
  }
}
