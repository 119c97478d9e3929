package dev.redlockd.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One Redis process in the simulation: the simulated node and what can happen to the process.
 * Its clock runs at its own rate (key expiry follows it). Frozen (SIGSTOP), it runs nothing
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

  SimHost(String name, SimLoop loop, double rate, long clockOffsetMillis) {
    this.name = name;
    this.loop = loop;
    this.redis = new SimRedis(name, () -> clockOffsetMillis + (long) (loop.now() * rate / 1_000_000));
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
