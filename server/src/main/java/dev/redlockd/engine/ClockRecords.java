package dev.redlockd.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The nodes' clocks as one replica read them at one instant, recorded on the nodes, so that a
 * replica with no history of a node (one that starts after a step, when the replica that watched
 * the node is gone) can still tell whether its clock stepped since: a node whose clock advanced,
 * since a record, by more than the others' did (beyond what rates within the drift factor
 * allow) stepped. Nothing is assumed about the clocks agreeing with each other, only about
 * their rates, and that most nodes did not step alike at once.
 *
 * <p>A record is written by a replica that trusts each clock in it from its own history, to
 * every node in it (so each node keeps the last record that includes it), as {@code id:reading:
 * uncertainty} per node, the readings in microseconds of that node's clock at one instant.
 */
final class ClockRecords {
  private ClockRecords() {}

  /** A node's clock at a record's instant, in microseconds, give or take {@code uncertainty}. */
  record Reading(String id, long micros, long uncertaintyMicros) {}

  enum Outcome {
    /** Advanced with most of the other nodes. */
    CONSISTENT,
    /** Advanced more (or less) than most of the other nodes by more than rates allow. */
    STEPPED,
    /** Neither: the nodes it was compared with disagree among themselves. */
    UNDECIDED,
    /** No record has this node and another node that answered now: nothing to compare with. */
    NO_RECORD
  }

  /** A check's outcome, the step's likeliest size (signed nanoseconds) and the record's age. */
  record Vetting(Outcome outcome, long stepNanos, long ageNanos) {}

  static String format(List<Reading> readings) {
    StringBuilder text = new StringBuilder();
    for (Reading r : readings) {
      if (!text.isEmpty()) {
        text.append(' ');
      }
      text.append(r.id()).append(':').append(r.micros()).append(':').append(r.uncertaintyMicros());
    }
    return text.toString();
  }

  /** A record's readings by node id; a record written in another shape reads as empty. */
  static Map<String, Reading> parse(String text) {
    Map<String, Reading> readings = new HashMap<>();
    if (text == null || text.isBlank()) {
      return readings;
    }
    for (String entry : text.trim().split(" +")) {
      String[] parts = entry.split(":");
      try {
        if (parts.length == 3 && !parts[0].isEmpty()) {
          readings.put(parts[0], new Reading(parts[0], Long.parseLong(parts[1]), Long.parseLong(parts[2])));
        }
      } catch (NumberFormatException e) {
        return new HashMap<>();
      }
    }
    return readings;
  }

  /**
   * Checks node {@code id}'s clock, as read now (every node's reading at one instant of this
   * replica), against the freshest of {@code records} that holds it and another node read now.
   * Against each other node: if neither stepped, their advances since the record differ by at
   * most twice the drift factor times the time passed (the others' median advance), plus both
   * readings' uncertainties and the tolerance. More than half of the others beyond that, all the
   * same way, is a step.
   */
  static Vetting vet(String id, Map<String, Reading> now, List<Map<String, Reading>> records, double driftFactor,
      long toleranceNanos) {
    Reading mine = now.get(id);
    Map<String, Reading> best = null;
    long bestAge = Long.MAX_VALUE;
    for (Map<String, Reading> record : records) {
      if (mine == null || !record.containsKey(id)) {
        continue;
      }
      List<Long> advances = new ArrayList<>();
      for (Reading then : record.values()) {
        Reading current = now.get(then.id());
        if (current != null) {
          advances.add(nanos(current.micros() - then.micros()));
        }
      }
      if (advances.size() < 2) {
        continue;
      }
      long age = median(advances);
      if (age < bestAge) {
        bestAge = age;
        best = record;
      }
    }
    if (best == null) {
      return new Vetting(Outcome.NO_RECORD, 0, 0);
    }
    long age = Math.max(0, bestAge);
    Reading then = best.get(id);
    long advance = nanos(mine.micros() - then.micros());
    long uncertainty = nanos(mine.uncertaintyMicros() + then.uncertaintyMicros());
    long rates = (long) Math.ceil(2 * driftFactor * age / (1 - driftFactor));
    int ahead = 0;
    int behind = 0;
    int with = 0;
    List<Long> gaps = new ArrayList<>();
    for (Reading other : best.values()) {
      Reading current = now.get(other.id());
      if (other.id().equals(id) || current == null) {
        continue;
      }
      long gap = advance - nanos(current.micros() - other.micros());
      long slack = rates + toleranceNanos + uncertainty
          + nanos(current.uncertaintyMicros() + other.uncertaintyMicros());
      gaps.add(gap);
      if (gap > slack) {
        ahead++;
      } else if (gap < -slack) {
        behind++;
      } else {
        with++;
      }
    }
    int compared = gaps.size();
    if (2 * ahead > compared || 2 * behind > compared) {
      return new Vetting(Outcome.STEPPED, median(gaps), age);
    }
    return new Vetting(2 * with > compared ? Outcome.CONSISTENT : Outcome.UNDECIDED, 0, age);
  }

  private static long nanos(long micros) {
    return micros * 1000;
  }

  private static long median(List<Long> values) {
    long[] sorted = values.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(sorted);
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : sorted[mid - 1] / 2 + sorted[mid] / 2;
  }
}
