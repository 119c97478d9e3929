package dev.redlockd.sim;

import java.util.PriorityQueue;

/**
 * Simulated time and the one queue of everything that happens in a simulation: engine tasks,
 * messages on the wire, script runs on the nodes, faults, clients. Single-threaded, so a seed
 * replays the same run event for event.
 */
final class SimLoop {
  /** Something due at a time; cancelled events stay queued and are skipped when due. */
  static final class Event implements Comparable<Event> {
    final long at;
    private final long seq;
    private final Runnable task;
    private boolean cancelled;
    private boolean ran;

    private Event(long at, long seq, Runnable task) {
      this.at = at;
      this.seq = seq;
      this.task = task;
    }

    boolean cancel() {
      if (ran || cancelled) {
        return false;
      }
      cancelled = true;
      return true;
    }

    boolean cancelled() {
      return cancelled;
    }

    boolean done() {
      return ran || cancelled;
    }

    @Override
    public int compareTo(Event o) {
      return at != o.at ? Long.compare(at, o.at) : Long.compare(seq, o.seq);
    }
  }

  private final PriorityQueue<Event> queue = new PriorityQueue<>();
  private long now;
  private long seq;
  private long ran;

  /** Simulated nanoseconds since the start. */
  long now() {
    return now;
  }

  Event at(long at, Runnable task) {
    Event e = new Event(Math.max(at, now), seq++, task);
    queue.add(e);
    return e;
  }

  Event after(long delayNanos, Runnable task) {
    return at(now + Math.max(0, delayNanos), task);
  }

  /** Runs every event due up to {@code until}; time stands at {@code until} afterwards. */
  void runUntil(long until) {
    while (!queue.isEmpty() && queue.peek().at <= until) {
      Event e = queue.poll();
      if (e.cancelled) {
        continue;
      }
      now = e.at;
      e.ran = true;
      ran++;
      e.task.run();
    }
    now = Math.max(now, until);
  }

  /** Events run so far. */
  long eventsRun() {
    return ran;
  }
}
