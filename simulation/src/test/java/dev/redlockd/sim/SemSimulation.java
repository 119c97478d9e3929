package dev.redlockd.sim;

import dev.redlockd.engine.LockEngine;
import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BiConsumer;

/**
 * One seeded run of the semaphore workload: two replicas of a semaphore (the real engine's
 * permits, or a mutant) over simulated nodes, clients taking permits of one or two semaphores
 * with limits 2 and 3, under the lock simulation's faults ({@link SimFaults}); then the faults
 * heal, the clients finish, and what is left on the nodes is checked.
 */
final class SemSimulation {
  /** Makes one replica of the semaphore under test, on its own links to the nodes. */
  interface Implementation {
    SimSemaphore replica(int index, SimLoop loop, List<RedisNode> links, SimExecutor executor, Random random,
        Map<String, Integer> limits);

    /**
     * Whether nodes are restarted empty and their clocks stepped: the mutant has no quarantine,
     * and its test is about counting.
     */
    boolean restarts();

    /** How many nodes each semaphore lives on (--nodes-per-resource); 0: every node. */
    default int perKey() {
      return 0;
    }
  }

  record Shape(int nodes, int clients, Map<String, Integer> semaphores, Duration length) {
    static Shape random(Random random) {
      Map<String, Integer> semaphores = new LinkedHashMap<>();
      semaphores.put("sem2", 2);
      if (random.nextBoolean()) {
        semaphores.put("sem3", 3);
      }
      return new Shape(random.nextBoolean() ? 3 : 5, 6 + random.nextInt(10), semaphores, Duration.ofSeconds(20));
    }

    /** Seven nodes, each semaphore on five: the two semaphores' sets differ, and share nodes (and faults). */
    static Shape scaledOut(Random random) {
      Shape shape = random(random);
      return new Shape(7, shape.clients(), shape.semaphores(), shape.length());
    }
  }

  /** What one run did and found; {@code naiveFlaws} counts bound violations with no node over its limit. */
  record Result(long seed, long operations, long grants, long full, List<String> violations, long naiveFlaws,
      String trace) {}

  /** The real engine's permits: replicas as the lock simulation builds them. */
  static final Implementation ENGINE = engine(false);

  /** The real engine's permits with thrifty rounds (--thrifty-rounds): each permit's rounds ask a quorum first. */
  static final Implementation THRIFTY = engine(true);

  /** The real engine's permits over seven nodes, each semaphore on five of them, thrifty. */
  static final Implementation SCALED_OUT = engine(true, 5);

  private static Implementation engine(boolean thrifty) {
    return engine(thrifty, 0);
  }

  private static Implementation engine(boolean thrifty, int perKey) {
    return new Implementation() {
      @Override
      public SimSemaphore replica(int index, SimLoop loop, List<RedisNode> links, SimExecutor executor,
          Random random, Map<String, Integer> limits) {
        // As in the lock simulation: the second replica's wall clock (the fencing floor of a
        // rejoining node) is up to a minute behind.
        long behind = index == 0 ? 0 : (long) (random.nextDouble() * 60_000_000);
        LockEngine.Builder builder = LockEngine.builder(links, Simulation.config().withThriftyRounds(thrifty));
        if (perKey != 0) {
          builder.nodesPerResource(perKey);
        }
        LockEngine engine = builder
            .scheduler(executor)
            .nanoClock(executor.nanoClock())
            .wallMicros(() -> 1_700_000_000_000_000L + loop.now() / 1000 - behind)
            .jitter(new Random(random.nextLong()))
            .tokens(new SimClient.SeededRandom(random.nextLong()))
            .build();
        engine.startAsync(Duration.ofSeconds(1));
        return new EngineSemaphore(engine, limits, Simulation.PREFIX);
      }

      @Override
      public boolean restarts() {
        return true;
      }

      @Override
      public int perKey() {
        return perKey;
      }
    };
  }

  /** The naive majority count, a mutant; without restarts, so that what is caught is the counting. */
  static final Implementation NAIVE = new Implementation() {
    @Override
    public SimSemaphore replica(int index, SimLoop loop, List<RedisNode> links, SimExecutor executor, Random random,
        Map<String, Integer> limits) {
      return new NaiveSemaphore(loop, links, Simulation.config(), random);
    }

    @Override
    public boolean restarts() {
      return false;
    }
  };

  private final long seed;
  private final Shape shape;
  private final Implementation implementation;
  private final Random random;
  private final SimLoop loop = new SimLoop();
  private final List<SimHost> hosts = new ArrayList<>();
  private final SimChecker base;
  private final SemChecker checker;
  private final SimNetwork network;
  private long operations;

  SemSimulation(long seed, Implementation implementation) {
    this(seed, implementation.perKey() != 0 ? Shape.scaledOut(new Random(seed)) : Shape.random(new Random(seed)),
        implementation);
  }

  SemSimulation(long seed, Shape shape, Implementation implementation) {
    this.seed = seed;
    this.shape = shape;
    this.implementation = implementation;
    this.random = new Random(seed * 31 + 11);
    this.network = new SimNetwork(loop, new Random(random.nextLong()), Simulation.NODE_TIMEOUT.toNanos());
    double drift = Simulation.config().driftFactor();
    for (int i = 0; i < shape.nodes(); i++) {
      hosts.add(new SimHost("node" + i, loop, rate(drift), 1_700_000_000_000L + random.nextInt(100_000)));
    }
    int setSize = implementation.perKey() != 0 ? implementation.perKey() : hosts.size();
    this.base = new SimChecker(loop, hosts, Simulation.PREFIX, setSize);
    this.checker = new SemChecker(base, loop, hosts, shape.semaphores(), setSize);
  }

  private double rate(double driftFactor) {
    return 1 + (random.nextDouble() * 2 - 1) * driftFactor / 2;
  }

  Result run() {
    BiConsumer<SimHost, String> lost = (host, token) -> {
      if (!token.isEmpty()) {
        base.excuse(token);
      }
    };
    List<SimSemaphore> replicas = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      SimExecutor executor = new SimExecutor(loop, rate(Simulation.config().driftFactor()), random.nextLong() >>> 8,
          base::crashed);
      List<RedisNode> links = new ArrayList<>();
      for (SimHost host : hosts) {
        links.add(new SimLink(loop, host, network, Simulation.NODE_TIMEOUT.toNanos(), lost, base::event, "replica" + r));
      }
      replicas.add(implementation.replica(r, loop, links, executor, new Random(random.nextLong()), shape.semaphores()));
    }
    checker.watch(replicas.get(0));
    List<SemClient> clients = new ArrayList<>();
    for (int c = 0; c < shape.clients(); c++) {
      clients.add(new SemClient("client" + c, loop, replicas, shape.semaphores(), checker,
          new Random(random.nextLong()), () -> operations++));
    }
    loop.runUntil(Duration.ofMillis(300).toNanos()); // the replicas start and seed the new cluster
    clients.forEach(SemClient::start);
    long end = loop.now() + shape.length().toNanos();
    audit(end);
    SimFaults faults = new SimFaults(loop, hosts, network, base, random);
    faults.schedule(end, implementation.restarts());
    loop.runUntil(end);
    faults.heal();
    clients.forEach(SemClient::stop);
    long drained = loop.now() + Duration.ofSeconds(10).toNanos();
    while (loop.now() < drained && !clients.stream().allMatch(SemClient::idle)) {
      loop.runUntil(loop.now() + Duration.ofMillis(100).toNanos());
    }
    loop.runUntil(loop.now() + Duration.ofSeconds(2).toNanos()); // late deliveries land
    loop.runUntil(loop.now() + faults.setBackNanos()); // keys live that much longer on clocks stepped back
    base.leftBehind();
    checker.leftBehind(base.excused());
    for (SimSemaphore replica : replicas) {
      if (replica instanceof AutoCloseable closeable) {
        try {
          closeable.close();
        } catch (Exception e) {
          base.crashed(e);
        }
      }
    }
    return new Result(seed, operations, checker.grants(), checker.full(), base.violations(), checker.overLimitWithNoNodeOver(),
        base.firstTrace());
  }

  private void audit(long end) {
    loop.after(Duration.ofMillis(50).toNanos(), () -> {
      base.audit();
      checker.audit();
      if (loop.now() < end) {
        audit(end);
      }
    });
  }
}
