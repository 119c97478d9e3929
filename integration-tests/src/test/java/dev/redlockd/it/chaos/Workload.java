package dev.redlockd.it.chaos;

import dev.redlockd.client.LockClient;
import dev.redlockd.client.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The contending clients of a run, a third of each {@link ClientKind}, alternating between the
 * replicas, each on its own thread with its own seeded randomness.
 */
final class Workload {
  private final List<Thread> threads = new ArrayList<>();
  private final Map<ClientKind, Integer> counts = new EnumMap<>(ClientKind.class);
  private volatile boolean stopping;

  private Workload() {}

  static Workload start(ChaosConfig config, Replicas replicas, History history, OpenStreams streams) {
    Workload workload = new Workload();
    Map<String, ProtectedResource> resources = new LinkedHashMap<>();
    for (String name : config.resourceNames()) {
      resources.put(name, new ProtectedResource(name, history));
    }
    ChaosClient.Shared shared = new ChaosClient.Shared(history, resources, config.resourceNames(), streams,
        new AtomicLong(), config.minTtl(), config.maxTtl(), () -> workload.stopping);
    List<LockClient> lockClients = new ArrayList<>();
    for (int r = 0; r < replicas.size(); r++) {
      lockClients.add(LockClient.builder(replicas.channel(r))
          .callTimeout(Duration.ofSeconds(2))
          .retryPolicy(RetryPolicy.defaults()
                  .withMaxAttempts(4).withInitialBackoff(Duration.ofMillis(50)).withMaxBackoff(Duration.ofMillis(400)))
          .owner("chaos")
          .build());
    }
    for (int i = 0; i < config.clients(); i++) {
      int replica = i % replicas.size();
      long seed = config.seed() * 1_000_003L + i;
      ClientKind kind = ClientKind.values()[i % ClientKind.values().length];
      String name = kind.name().toLowerCase() + "-" + i;
      ChaosClient client = switch (kind) {
        case RAW -> new RawClient(name, replica, replicas.channel(replica), shared, seed);
        case KEEP_ALIVE -> new KeepAliveClient(name, replica, lockClients.get(replica), shared, seed);
        case WITH_LOCK -> new WithLockClient(name, replica, lockClients.get(replica), shared, seed);
      };
      workload.counts.merge(kind, 1, Integer::sum);
      Thread t = new Thread(client, "chaos-" + name);
      t.setDaemon(true);
      workload.threads.add(t);
    }
    workload.threads.forEach(Thread::start);
    return workload;
  }

  Map<ClientKind, Integer> clientsByKind() {
    return counts;
  }

  /**
   * Asks every client to stop after its current round and waits for them: a round ends within
   * its wait plus the call deadline, or a few ttls for a kept lease. Returns the clients still
   * running after {@code timeout} (they are interrupted).
   */
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
}
