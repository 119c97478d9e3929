package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches every Redis node's wall clock, by which Redis expires keys, in the TIME that every
 * granting or renewing script and every probe returns (see docs/guarantees.md, Clock steps).
 * Every round passes its replies through {@link Round#judge}: a reply from a node whose clock
 * stepped, or that this replica cannot check yet, does not vote, in that very round; the
 * monitor's next probe (asked for at once) quarantines a stepped node on the node itself, so
 * that no replica counts it for {@code --max-ttl}.
 *
 * <p>Per node the history is this replica's ({@link NodeClock}); a node it has none of is
 * checked at a probe against the clocks other replicas recorded on the nodes
 * ({@link ClockRecords}), which each probe here records in turn.
 */
final class ClockWatch {
  private static final Logger log = LoggerFactory.getLogger(ClockWatch.class);

  private final Map<RedisNode, NodeClock> clocks = new IdentityHashMap<>();
  private final EngineConfig config;
  private final LongSupplier nanoClock;
  private final List<Consumer<ClockStep>> listeners = new CopyOnWriteArrayList<>();
  private volatile Runnable probeSoon = () -> {};
  private final Set<RedisNode> rateWarned = ConcurrentHashMap.newKeySet();
  private final Set<RedisNode> undecided = ConcurrentHashMap.newKeySet();
  private final Set<RedisNode> noRecord = ConcurrentHashMap.newKeySet();

  ClockWatch(List<RedisNode> nodes, EngineConfig config, LongSupplier nanoClock) {
    this.config = config;
    this.nanoClock = nanoClock;
    for (RedisNode node : nodes) {
      clocks.put(node, new NodeClock(config.driftFactor()));
    }
  }

  /** Called when a reply shows a step: the monitor probes at once, and its probe quarantines the node. */
  void onProbeWanted(Runnable probe) {
    this.probeSoon = probe;
  }

  void onStep(Consumer<ClockStep> listener) {
    listeners.add(listener);
  }

  /** The replies of one round, sent at {@code sentNanos}; {@code what} names the round in the log. */
  Round round(long sentNanos, String what) {
    return new Round(sentNanos, what);
  }

  /** One round's replies, judged as each comes in (before the round counts it). */
  final class Round {
    private final long sentNanos;
    private final String what;

    private Round(long sentNanos, String what) {
      this.sentNanos = sentNanos;
      this.what = what;
    }

    /** Whether this reply of {@code node}, whose TIME read {@code nodeMicros}, votes. */
    NodeClock.Verdict judge(RedisNode node, long nodeMicros) {
      NodeClock.Seen seen = clocks.get(node).judge(sentNanos, nanoClock.getAsLong(), nodeMicros * 1000);
      if (seen.newStep()) {
        stepped(node, seen.stepNanos(), what);
      }
      return seen.verdict();
    }
  }

  /** One node's answer to a probe: when it came, its TIME, its id and the clock record it holds. */
  record ProbeSample(RedisNode node, long receivedNanos, long nodeMicros, String id, String record) {}

  /**
   * Judges a probe round sent at {@code sentNanos}: each node this replica has a history of, as
   * any round's replies; each it has none of, against the records on the nodes. Returns the
   * nodes whose step is not yet answered by a quarantine, with the step (signed nanoseconds);
   * their history restarts from this probe, so that once quarantined they are judged by their
   * clock as it is now.
   */
  Map<RedisNode, Long> probe(long sentNanos, List<ProbeSample> samples) {
    Map<String, ClockRecords.Reading> now = readings(sentNanos, samples);
    List<Map<String, ClockRecords.Reading>> records = new ArrayList<>();
    for (ProbeSample s : samples) {
      records.add(ClockRecords.parse(s.record()));
    }
    Map<RedisNode, Long> steps = new LinkedHashMap<>();
    for (ProbeSample s : samples) {
      NodeClock clock = clocks.get(s.node());
      clock.id(s.id());
      long nodeNanos = s.nodeMicros() * 1000;
      if (clock.anchored()) {
        NodeClock.Seen seen = clock.judge(sentNanos, s.receivedNanos(), nodeNanos);
        if (seen.newStep()) {
          stepped(s.node(), seen.stepNanos(), "a probe");
        }
      } else {
        vet(s, now, records, sentNanos);
      }
      long step = clock.pendingStep();
      if (step != 0) {
        clock.anchor(sentNanos, s.receivedNanos(), nodeNanos);
        steps.put(s.node(), step);
      } else if (clock.trusted()) {
        watchRate(s.node(), clock.measureRate());
      }
    }
    return steps;
  }

  private void vet(ProbeSample s, Map<String, ClockRecords.Reading> now,
      List<Map<String, ClockRecords.Reading>> records, long sentNanos) {
    NodeClock clock = clocks.get(s.node());
    ClockRecords.Vetting vetting = ClockRecords.vet(s.id(), now, records, config.driftFactor(),
        NodeClock.TOLERANCE_NANOS);
    switch (vetting.outcome()) {
      case UNDECIDED -> {
        if (undecided.add(s.node())) {
          log.warn("Redis node {}: this server has no history of its clock yet, and the other nodes' clocks "
              + "recorded {} ago disagree among themselves about it; it does not vote here until they agree",
              s.node().name(), describe(vetting.ageNanos()));
        }
        return;
      }
      case NO_RECORD -> {
        if (noRecord.add(s.node())) {
          log.info("Redis node {}: no server has recorded its clock beside the other nodes' yet (a new cluster, a "
              + "node new to it, or the first start of this version): its clock is taken as it reads now, and "
              + "watched from here on", s.node().name());
        }
      }
      default -> {
        // CONSISTENT or STEPPED: either way the history starts here.
      }
    }
    undecided.remove(s.node());
    anchor(s.node(), sentNanos, s.receivedNanos(), s.nodeMicros());
    if (vetting.outcome() == ClockRecords.Outcome.STEPPED) {
      clock.stepped(vetting.stepNanos());
      stepped(s.node(), vetting.stepNanos(), "a comparison with the other nodes' clocks, as a server recorded them "
          + describe(vetting.ageNanos()) + " ago");
    }
  }

  /**
   * Every node's clock at the probe's send time, as a record holds them: a node read its TIME
   * somewhere in its round trip, so its reading is put at the middle of it, give or take half.
   */
  private Map<String, ClockRecords.Reading> readings(long sentNanos, List<ProbeSample> samples) {
    Map<String, ClockRecords.Reading> now = new LinkedHashMap<>();
    for (ProbeSample s : samples) {
      if (s.id().isEmpty()) {
        continue;
      }
      long half = (long) Math.ceil(Math.max(0, s.receivedNanos() - sentNanos) * (1 + config.driftFactor()) / 2);
      long micros = (s.nodeMicros() * 1000 - half) / 1000;
      now.put(s.id(), new ClockRecords.Reading(s.id(), micros, half / 1000 + 2));
    }
    return now;
  }

  /**
   * What this replica records on the nodes after a probe: the clocks of every node it trusts,
   * or null when fewer than two (nothing to compare), and on which nodes to write it.
   */
  record Record(String text, List<RedisNode> on) {}

  Record record(long sentNanos, List<ProbeSample> samples) {
    List<ProbeSample> trusted = new ArrayList<>();
    for (ProbeSample s : samples) {
      if (!s.id().isEmpty() && clocks.get(s.node()).trusted()) {
        trusted.add(s);
      }
    }
    if (trusted.size() < 2) {
      return null;
    }
    return new Record(ClockRecords.format(List.copyOf(readings(sentNanos, trusted).values())),
        trusted.stream().map(ProbeSample::node).toList());
  }

  /**
   * Starts this replica's history of the node from one reading, without checking it against
   * anything: what a probe does when no record of the node exists.
   */
  void anchor(RedisNode node, long sentNanos, long receivedNanos, long nodeMicros) {
    clocks.get(node).anchor(sentNanos, receivedNanos, nodeMicros * 1000);
  }

  /** The node was quarantined on the node for its step: it votes again (once it rejoins) by its clock as it is now. */
  void quarantined(RedisNode node) {
    clocks.get(node).quarantined();
  }

  /** Whether this replica counts the node's votes by its clock: it has a history of it and no step is pending. */
  boolean trusted(RedisNode node) {
    return clocks.get(node).trusted();
  }

  /** Each node's rate difference against this server's clock, where one was measured. */
  Map<String, Double> rates() {
    Map<String, Double> rates = new LinkedHashMap<>();
    clocks.forEach((node, clock) -> {
      double rate = clock.rate();
      if (!Double.isNaN(rate)) {
        rates.put(node.name(), rate);
      }
    });
    return rates;
  }

  private void watchRate(RedisNode node, double rate) {
    if (Double.isNaN(rate)) {
      return;
    }
    if (Math.abs(rate) > config.driftFactor()) {
      if (rateWarned.add(node)) {
        log.warn("Redis node {}'s clock runs {} {} than this server's over the last minute or more: beyond the "
            + "drift factor {}, which is all that validity holds back for clock rates", node.name(),
            String.format("%.3f %%", Math.abs(rate) * 100), rate > 0 ? "faster" : "slower", config.driftFactor());
      }
    } else if (rateWarned.remove(node)) {
      log.info("Redis node {}'s clock rate is within the drift factor again ({} against this server's)", node.name(),
          String.format("%+.4f %%", rate * 100));
    }
  }

  private void stepped(RedisNode node, long nanos, String seenIn) {
    String quarantine = describe(config.maxTtl().toNanos()) + " (--max-ttl)";
    if (nanos > 0) {
      log.error("Redis node {}'s clock stepped forward by {} (seen in {}): Redis expires keys by that clock, so "
          + "locks there may have been freed early. Its votes do not count, and it is quarantined for {}",
          node.name(), describe(nanos), seenIn, quarantine);
    } else {
      log.warn("Redis node {}'s clock stepped back by {} (seen in {}): keys there live longer than their ttl. It is "
          + "quarantined for {} all the same: a later step forward would look like no step at all to a server "
          + "that saw neither", node.name(), describe(-nanos), seenIn, quarantine);
    }
    ClockStep step = new ClockStep(node.name(), Duration.ofNanos(nanos));
    listeners.forEach(l -> l.accept(step));
    probeSoon.run();
  }

  /** 12.5 ms, 30.012 s, 60.0 min. */
  static String describe(long nanos) {
    if (nanos >= 120_000_000_000L) {
      return String.format("%.1f min", nanos / 6e10);
    }
    return nanos >= 1_000_000_000L ? String.format("%.3f s", nanos / 1e9) : String.format("%.1f ms", nanos / 1e6);
  }
}
