package dev.redlockd.engine;

import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Acquire calls on this server waiting for a resource, oldest first, so a release through
 * this server hands the lock on at once instead of after a retry delay. Concurrent maps and
 * queues: waiters come and go from gRPC and node threads alike.
 */
final class Waiters {
  private final ConcurrentHashMap<String, Queue<AcquireOperation>> byResource = new ConcurrentHashMap<>();

  void add(AcquireOperation op) {
    // Inside compute, so a concurrent remove cannot drop the queue between lookup and add.
    byResource.compute(op.resource(), (r, queue) -> {
      Queue<AcquireOperation> q = queue == null ? new ConcurrentLinkedQueue<>() : queue;
      q.add(op);
      return q;
    });
  }

  void remove(AcquireOperation op) {
    byResource.computeIfPresent(op.resource(), (r, queue) -> {
      queue.remove(op);
      return queue.isEmpty() ? null : queue;
    });
  }

  /** Wakes the oldest waiter still waiting (see {@link AcquireOperation#wake()}). */
  void wakeNext(String resource) {
    Queue<AcquireOperation> queue = byResource.get(resource);
    if (queue != null) {
      for (AcquireOperation op : queue) {
        if (op.wake()) {
          return;
        }
      }
    }
  }
}
