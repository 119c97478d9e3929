package dev.redlockd.node;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Hands many calls to each node at once. Calls made inside {@link #together} are held on the
 * calling thread and handed to their connection's I/O thread in one task when it returns: the
 * thread then sends them in one pass, as one pipeline and (for the engine's scripts) as one
 * batch call. Without this, a thread woken by the first call sends it alone while the caller
 * is still queueing the rest, and a burst of renewals costs a wake-up and a round trip on
 * every node for nearly every lease.
 */
public final class Pipelining {
  private static final ThreadLocal<Map<RedisConnection, List<NodeCall>>> held = new ThreadLocal<>();

  private Pipelining() {}

  /** Runs {@code calls}; node calls it makes are queued when it returns. Nested calls join the outer batch. */
  public static void together(Runnable calls) {
    if (held.get() != null) {
      calls.run();
      return;
    }
    Map<RedisConnection, List<NodeCall>> batches = new LinkedHashMap<>();
    held.set(batches);
    try {
      calls.run();
    } finally {
      held.remove();
      batches.forEach(RedisConnection::submitAll);
    }
  }

  /** Submits at once, or holds the call until the enclosing {@link #together} returns. */
  static void queue(RedisConnection connection, NodeCall call) {
    Map<RedisConnection, List<NodeCall>> batches = held.get();
    if (batches == null) {
      connection.submit(call);
    } else {
      batches.computeIfAbsent(connection, n -> new ArrayList<>()).add(call);
    }
  }
}
