package dev.redlockd.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One Redis process in the simulation: the simulated node and what can happen to the process.
 * Its wall clock runs at its own rate and may step (key expiry follows it, and so does TIME,
 * unless the host is made to hide its steps from TIME: the mutant that no watch can catch).
 * Frozen (SIGSTOP), it runs nothing
 * and keeps what arrives for when it thaws, in arrival order; restarted, it comes back empty
 * and every connection to it is gone, with whatever it had not run yet.
 */
final class SimHost {
  final String name;
  final SimRedis redis;
  private final SimLoop loop;
  private final List<SimLink> links = new ArrayList<>();
  private final ArrayDeque<Runnable> backlog = new ArrayDeque<>();
  private boolean frozen;
  private int generation;
  private long lastRestartNanos = -1;
  private final double rate;
  private final long clockOffsetMicros;
  /** What the host's clock was stepped by, in all. */
  private long steppedMicros;
  /** What the host's clock was stepped back by, in all: how much longer a key may live here than its ttl. */
  private long steppedBackMicros;
  private long lastStepNanos = -1;
  private boolean hideSteps;

  SimHost(String name, SimLoop loop, double rate, long clockOffsetMillis) {
    this.name = name;
    this.loop = loop;
    this.rate = rate;
    this.clockOffsetMicros = clockOffsetMillis * 1000;
    this.redis = new SimRedis(name, this::wallMicros,
        () -> hideSteps ? wallMicros() - steppedMicros : wallMicros());
  }

  /** The host's wall clock, by which Redis expires keys. */
  private long wallMicros() {
    return clockOffsetMicros + (long) (loop.now() * rate / 1000) + steppedMicros;
  }

  /** Steps the host's wall clock (an NTP step, a VM resumed, a hand-set date). */
  void stepClock(long micros) {
    steppedMicros += micros;
    steppedBackMicros += Math.max(0, -micros);
    lastStepNanos = loop.now();
  }

  /** How much longer than its ttl a key written here may live, by the steps back of its clock. */
  long steppedBackNanos() {
    return steppedBackMicros * 1000;
  }

  /** From now on TIME reads the clock as if it never stepped, while keys still expire by it. */
  void hideClockSteps() {
    hideSteps = true;
  }

  /** Simulated time of the last clock step, or -1. */
  long lastStepNanos() {
    return lastStepNanos;
  }

  void attach(SimLink link) {
    links.add(link);
  }

  int generation() {
    return generation;
  }

  /** Runs {@code work} now, or when the process thaws. */
  void arrive(Runnable work) {
    if (frozen) {
      backlog.add(work);
    } else {
      work.run();
    }
  }

  boolean frozen() {
    return frozen;
  }

  void freeze() {
    frozen = true;
  }

  void thaw() {
    frozen = false;
    while (!frozen && !backlog.isEmpty()) {
      backlog.poll().run();
    }
  }

  void dropConnections(String why) {
    links.forEach(l -> l.drop(why));
  }

  /** Killed and started again without persistence: no data, no scripts, no connections. */
  void restartEmpty() {
    generation++;
    lastRestartNanos = loop.now();
    backlog.clear();
    frozen = false;
    redis.restartEmpty();
    links.forEach(l -> l.drop("node restarted"));
  }

  /** Simulated time of the last restart, or -1. */
  long lastRestartNanos() {
    return lastRestartNanos;
  }
}
