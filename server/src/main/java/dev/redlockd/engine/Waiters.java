package dev.redlockd.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * Acquire calls on this server waiting for a resource, oldest first, so that a release hands
 * the lock on at once instead of after a retry delay: a release through this server directly,
 * a release through any other server by the notice release.lua publishes on the resource's
 * channel, which this server listens to while anyone waits here for the resource.
 *
 * <p>One release wakes one waiter here: its notice comes from each node that deleted the lock,
 * and every copy goes to the waiter the first one woke (whose next round then runs at once if
 * the one under way fails because other nodes had not yet deleted it). Concurrent maps and
 * queues: waiters come and go from gRPC, engine and I/O threads alike.
 */
final class Waiters {
  /** Releases remembered, far more than arrive within the time their copies take. */
  private static final int RECENT_RELEASES = 1024;

  private final ConcurrentHashMap<String, Queue<AcquireOperation>> byResource = new ConcurrentHashMap<>();
  private final Map<String, AcquireOperation> wokenBy = Collections.synchronizedMap(
      new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, AcquireOperation> eldest) {
          return size() > RECENT_RELEASES;
        }
      });
  private final Keys keys;
  private final NodeEvents events;

  Waiters(Keys keys, NodeEvents events) {
    this.keys = keys;
    this.events = events;
  }

  void add(AcquireOperation op) {
    AtomicBoolean[] subscribing = new AtomicBoolean[1];
    // Inside compute, so a concurrent remove cannot drop the queue between lookup and add, and
    // the channel's subscribe and unsubscribe calls reach the nodes in order.
    byResource.compute(op.resource(), (r, queue) -> {
      Queue<AcquireOperation> q = queue;
      if (q == null) {
        q = new ConcurrentLinkedQueue<>();
        subscribing[0] = new AtomicBoolean();
        events.listen(keys.releasedChannel(r), handler(r, subscribing[0]));
      }
      q.add(op);
      return q;
    });
    if (subscribing[0] != null && subscribing[0].get()) {
      // Confirmed before the queue was in the map (a lookup during compute sees none): that
      // wake-up found nobody, so this one stands in for it. Two wake-ups cost a round at most.
      wakeOldest(op.resource());
    }
  }

  void remove(AcquireOperation op) {
    byResource.computeIfPresent(op.resource(), (r, queue) -> {
      queue.remove(op);
      if (!queue.isEmpty()) {
        return queue;
      }
      events.stop(keys.releasedChannel(r));
      return null;
    });
  }

  /**
   * A release through this server whose scripts this thread has just sent: the oldest waiter's
   * next round starts at once, on this thread, before the release is answered. One thread's calls
   * to a node reach it in the order made, so on every node the round's script runs after the
   * release's: the lock goes on in about one round trip instead of two (the release's, then the
   * round's). Only a hint, as every wake-up: the round is a full quorum round, and if the release
   * freed nothing there it is refused and the waiter waits on. The release's notice, from this
   * server's tally and the nodes' copies, goes to the same waiter (see {@link #released}).
   */
  void handOn(String resource, String notice) {
    if (!byResource.containsKey(resource)) {
      return;
    }
    List<Runnable> round = new ArrayList<>(1);
    AcquireOperation woken = wakeOldest(resource, op -> op.wake(round::add));
    if (woken != null) {
      wokenBy.put(notice, woken); // before the round: a copy of the notice must find this waiter
      AcquireOperation.startHere(() -> round.forEach(Runnable::run));
    }
  }

  /** The release named {@code notice} freed the resource: wake the waiter it woke, or the oldest. */
  void released(String resource, String notice) {
    if (!byResource.containsKey(resource)) {
      return; // nobody waits here: the usual release, which then touches no shared map
    }
    AcquireOperation earlier = wokenBy.get(notice);
    if (earlier != null) {
      earlier.wake();
      return;
    }
    AcquireOperation woken = wakeOldest(resource);
    if (woken != null) {
      wokenBy.put(notice, woken);
    }
  }

  /** Wakes the oldest waiter still waiting (see {@link AcquireOperation#wake()}); null if none. */
  AcquireOperation wakeOldest(String resource) {
    return wakeOldest(resource, AcquireOperation::wake);
  }

  /** The oldest waiter still waiting that {@code wake} woke; null if none. */
  private AcquireOperation wakeOldest(String resource, Predicate<AcquireOperation> wake) {
    Queue<AcquireOperation> queue = byResource.get(resource);
    if (queue != null) {
      for (AcquireOperation op : queue) {
        if (wake.test(op)) {
          return op;
        }
      }
    }
    return null;
  }

  private NodeEvents.Handler handler(String resource, AtomicBoolean heard) {
    return new NodeEvents.Handler() {
      @Override
      public void message(String notice) {
        released(resource, notice);
      }

      @Override
      public void subscribed() {
        // A release between the first waiter's last round and the first node's subscription
        // went unheard: one more round finds out. Later confirmations (other nodes, a node
        // reconnecting) change nothing while any node still delivers.
        if (heard.compareAndSet(false, true)) {
          wakeOldest(resource);
        }
      }
    };
  }
}
