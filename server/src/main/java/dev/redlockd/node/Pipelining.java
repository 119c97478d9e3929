package dev.redlockd.node;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Hands many calls to each node at once. Calls made inside {@link #together} are held on the
 * calling thread and handed to their connection's I/O thread in one go when it returns: the
 * thread then finds them all waiting and sends them as one pipeline. Without this, a thread
 * woken by the first call sends it alone while the caller is still queueing the rest, and a
 * burst of renewals costs a wake-up and a round trip on every node for nearly every lease.
 */
public final class Pipelining {
  private static final ThreadLocal<Map<Object, List<Runnable>>> held = new ThreadLocal<>();

  private Pipelining() {}

  /** Runs {@code calls}; node calls it makes are queued when it returns. Nested calls join the outer batch. */
  public static void together(Runnable calls) {
    if (held.get() != null) {
      calls.run();
      return;
    }
    Map<Object, List<Runnable>> batches = new LinkedHashMap<>();
    held.set(batches);
    try {
      calls.run();
    } finally {
      held.remove();
      batches.values().forEach(queueing -> queueing.forEach(Runnable::run));
    }
  }

  /** Queues at once, or holds the queueing until the enclosing {@link #together} returns. */
  static void queue(Object connection, Runnable queueing) {
    Map<Object, List<Runnable>> batches = held.get();
    if (batches == null) {
      queueing.run();
    } else {
      batches.computeIfAbsent(connection, n -> new ArrayList<>()).add(queueing);
    }
  }
}
