package dev.redlockd.it.chaos;

import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The semaphore phase, run beside the lock workload under the same faults: N + 3 workers on
 * one semaphore of N permits, alternating between the replicas. Its checks: at most N
 * sections at once, per permit one holder at a time and rising fencing tokens, and after the
 * run no permit left on any node.
 */
final class PermitWorkload {
  static final String SEMAPHORE = "chaos-sem";
  static final int PERMITS = 3;

  private final List<Thread> threads = new ArrayList<>();
  private final List<PermitSection> sections = Collections.synchronizedList(new ArrayList<>());
  private volatile boolean stopping;

  private PermitWorkload() {}

  static PermitWorkload start(ChaosConfig config, Replicas replicas, History history) {
    PermitWorkload workload = new PermitWorkload();
    for (int i = 0; i < PERMITS + 3; i++) {
      PermitWorker worker = new PermitWorker("permit-" + i, SEMAPHORE, PERMITS, replicas.channel(i % replicas.size()),
          history, workload.sections, () -> workload.stopping, config.seed() * 7_000_003L + i);
      Thread t = new Thread(worker, "chaos-permit-" + i);
      t.setDaemon(true);
      workload.threads.add(t);
    }
    workload.threads.forEach(Thread::start);
    return workload;
  }

  /** Stops the workers after their current round; returns how many were still running after {@code timeout}. */
  int stop(Duration timeout) throws InterruptedException {
    stopping = true;
    long until = System.nanoTime() + timeout.toNanos();
    int stuck = 0;
    for (Thread t : threads) {
      t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
      if (t.isAlive()) {
        stuck++;
        t.interrupt();
      }
    }
    return stuck;
  }

  List<PermitSection> sections() {
    synchronized (sections) {
      return List.copyOf(sections);
    }
  }

  /** The most sections that overlapped at one instant (the bound must have been reached for a pass to mean much). */
  int mostAtOnce() {
    List<PermitSection> all = sections();
    int most = 0;
    for (PermitSection s : all) {
      int open = 0;
      for (PermitSection o : all) {
        if (o.start() <= s.start() && o.end() > s.start()) {
          open++;
        }
      }
      most = Math.max(most, open);
    }
    return most;
  }

  /** After --max-ttl: no node may still hold a permit key of the semaphore. */
  static List<Violation> leftover(RedisCluster cluster, String keyPrefix) {
    List<Violation> found = new ArrayList<>();
    for (int node = 0; node < cluster.size(); node++) {
      Object keys = cluster.call(node, "KEYS", keyPrefix + "semaphore:{" + SEMAPHORE + "}:permit:*");
      if (keys instanceof List<?> list && !list.isEmpty()) {
        found.add(new Violation(Violation.Kind.LOCK_LEFT_HELD, "node " + node + " still holds permits " + list));
      }
    }
    return found;
  }
}
