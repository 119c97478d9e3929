package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.util.List;

/** Typed views of the Lua scripts' array replies. */
final class Replies {
  private Replies() {}

  /**
   * acquire.lua and acquire_permit.lua: outcome 1 = taken, 2 = refreshed for the same token, 0 =
   * held by another; for a permit also 3 = the node's limit is another N ({@code limit}), 4 = the
   * token holds permit {@code mine} here. {@code held} has one character per permit, '1' where
   * another token holds it on this node (empty for a lock). {@code clock} is what the clock watch
   * made of the node's TIME.
   */
  record Acquire(int outcome, long fence, boolean incarnated, NodeClock.Verdict clock, long limit, int mine,
      String held) {
    Acquire(int outcome, long fence, boolean incarnated, NodeClock.Verdict clock) {
      this(outcome, fence, incarnated, clock, 0, 0, "");
    }

    /** Whether this node's answer counts: it holds its incarnation key, and its clock is where its history says. */
    boolean votes() {
      return incarnated && clock == NodeClock.Verdict.VOTES;
    }

    /** Whether the node's clock stepped: what it wrote in this round is taken back, granted or not. */
    boolean stepped() {
      return clock == NodeClock.Verdict.STEPPED;
    }

    boolean holds() {
      return outcome == 1 || outcome == 2;
    }

    boolean taken() {
      return outcome == 1;
    }

    boolean mismatch() {
      return outcome == 3;
    }

    boolean holdsAnother() {
      return outcome == 4;
    }

    /** Whether permit {@code k} (1..N) is free of other tokens here, as read. */
    boolean free(int k) {
      return k > held.length() || held.charAt(k - 1) != '1';
    }
  }

  /** extend.lua and extend_permits.lua, for one lease. */
  record Extend(boolean held, long fence, boolean incarnated, NodeClock.Verdict clock) {
    /** As {@link Acquire#votes()}. */
    boolean votes() {
      return incarnated && clock == NodeClock.Verdict.VOTES;
    }
  }

  /** restore.lua: {@code put} when the node holds the lease now (written, or held already). */
  record Restore(boolean put, boolean incarnated, NodeClock.Verdict clock) {
    /** As {@link Acquire#votes()}. */
    boolean votes() {
      return incarnated && clock == NodeClock.Verdict.VOTES;
    }
  }

  /** release.lua */
  record Release(boolean deleted, boolean incarnated) {}

  /**
   * describe.lua: what one node holds for a resource. {@code holder} is the SHA1 of the token
   * (empty when the lock key is absent), never the token itself.
   */
  record Described(String holder, long pttlMillis, String owner, long fence, boolean incarnated) {
    boolean holds() {
      return !holder.isEmpty();
    }
  }

  /** force_release.lua */
  record ForceReleased(boolean deleted, boolean incarnated) {}

  /**
   * probe.lua, and when its answer came in: {@code why} the node is (or was last) quarantined,
   * its {@code id} and the {@code clocks} a replica last recorded on it (see ClockRecords).
   */
  record Probe(String state, long quarantineMillisLeft, long fenceMax, long nodeMicros, String why, String id,
      String clocks, long receivedNanos) {}

  /** acquire.lua's reply from {@code node}, its TIME judged as one of {@code round}'s. */
  static Acquire acquire(Object reply, ClockWatch.Round round, RedisNode node) {
    List<?> r = list(reply, 5);
    return new Acquire((int) number(r.get(0)), number(r.get(1)), number(r.get(2)) == 1,
        round.judge(node, micros(r, 3)));
  }

  /** acquire_permit.lua's reply, as {@link #acquire}. */
  static Acquire acquirePermit(Object reply, ClockWatch.Round round, RedisNode node) {
    List<?> r = list(reply, 8);
    return new Acquire((int) number(r.get(0)), number(r.get(1)), number(r.get(2)) == 1,
        round.judge(node, micros(r, 6)), number(r.get(3)), (int) number(r.get(4)), String.valueOf(r.get(5)));
  }

  /** A TIME reply's two numbers, seconds at {@code at} and microseconds after it, in microseconds. */
  static long micros(List<?> reply, int at) {
    return number(reply.get(at)) * 1_000_000 + number(reply.get(at + 1));
  }

  /** describe_permits.lua: the node's limit (0 if none) and each permit's {@link Described}. */
  record DescribedPermits(boolean incarnated, long limit, List<Described> permits) {}

  static DescribedPermits describedPermits(Object reply, int permits) {
    List<?> r = list(reply, 2 + 4 * permits);
    boolean incarnated = number(r.get(0)) == 1;
    String limit = String.valueOf(r.get(1));
    List<Described> each = new java.util.ArrayList<>(permits);
    for (int i = 0; i < permits; i++) {
      int at = 2 + 4 * i;
      each.add(new Described(String.valueOf(r.get(at)), number(r.get(at + 1)), String.valueOf(r.get(at + 2)),
          number(r.get(at + 3)), incarnated));
    }
    return new DescribedPermits(incarnated, limit.isEmpty() ? 0 : Long.parseLong(limit), each);
  }

  /**
   * extend.lua's reply for {@code leases} leases, one Extend per lease in the order asked; its
   * TIME judged as in {@link #acquire}.
   */
  static List<Extend> extend(Object reply, int leases, ClockWatch.Round round, RedisNode node) {
    List<?> r = list(reply, 3 + 2 * leases);
    boolean incarnated = number(r.get(0)) == 1;
    NodeClock.Verdict clock = round.judge(node, micros(r, 1));
    List<Extend> each = new java.util.ArrayList<>(leases);
    for (int i = 0; i < leases; i++) {
      each.add(new Extend(number(r.get(3 + 2 * i)) == 1, number(r.get(4 + 2 * i)), incarnated, clock));
    }
    return each;
  }

  static Restore restore(Object reply, ClockWatch.Round round, RedisNode node) {
    List<?> r = list(reply, 4);
    return new Restore(number(r.get(0)) != 0, number(r.get(1)) == 1, round.judge(node, micros(r, 2)));
  }

  static Release release(Object reply) {
    List<?> r = list(reply, 2);
    return new Release(number(r.get(0)) == 1, number(r.get(1)) == 1);
  }

  static Described described(Object reply) {
    List<?> r = list(reply, 5);
    return new Described(String.valueOf(r.get(0)), number(r.get(1)), String.valueOf(r.get(2)), number(r.get(3)),
        number(r.get(4)) == 1);
  }

  static ForceReleased forceReleased(Object reply) {
    List<?> r = list(reply, 2);
    return new ForceReleased(number(r.get(0)) == 1, number(r.get(1)) == 1);
  }

  static Probe probe(Object reply, long receivedNanos) {
    List<?> r = list(reply, 8);
    return new Probe(String.valueOf(r.get(0)), number(r.get(1)), number(r.get(2)), micros(r, 3),
        String.valueOf(r.get(5)), String.valueOf(r.get(6)), String.valueOf(r.get(7)), receivedNanos);
  }

  static long number(Object value) {
    if (value instanceof Number n) {
      return n.longValue();
    }
    if (value instanceof String s) {
      return Long.parseLong(s);
    }
    throw new IllegalStateException("expected a number from Redis, got " + value);
  }

  private static List<?> list(Object reply, int size) {
    if (reply instanceof List<?> list && list.size() == size) {
      return list;
    }
    throw new IllegalStateException("unexpected script reply " + reply);
  }
}
