package dev.redlockd.sim;

import dev.redlockd.engine.EngineConfig;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BiConsumer;

/**
 * One seeded run: two engine replicas (the real LockEngine, each on its own drifting clock)
 * over simulated Redis nodes that run the engine's own scripts, contending clients, and a
 * schedule of faults: nodes frozen, restarted empty, slow beyond the node timeout, connections
 * dropped. Then the faults heal, the clients finish, and what is left on the nodes is checked.
 */
final class Simulation {
  static final String PREFIX = "redlock:";
  static final Duration NODE_TIMEOUT = Duration.ofMillis(50);

  /** What one run did and found. */
  record Result(long seed, long operations, long events, List<String> violations, String trace) {}

  /**
   * Knobs of a run; {@link #random} picks them from the seed.
   *
   * @param perKey how many nodes each resource lives on (--nodes-per-resource); 0: every node
   */
  record Shape(int nodes, int clients, int resources, Duration length, boolean faults, int perKey) {
    Shape(int nodes, int clients, int resources, Duration length, boolean faults) {
      this(nodes, clients, resources, length, faults, 0);
    }

    static Shape random(Random random) {
      return new Shape(random.nextBoolean() ? 3 : 5, 6 + random.nextInt(10), 1 + random.nextInt(4),
          Duration.ofSeconds(20), true);
    }

    /**
     * Nine nodes, each resource on five: more resources than the every-node runs, so that they
     * fall on different sets that share some nodes (and faults), and the clients still contend.
     */
    static Shape scaledOut(Random random) {
      return new Shape(9, 6 + random.nextInt(10), 3 + random.nextInt(8), Duration.ofSeconds(20), true, 5);
    }

    /** The nodes a resource's quorum is a majority of. */
    int setSize() {
      return perKey == 0 ? nodes : perKey;
    }
  }

  private final long seed;
  private final Shape shape;
  /** Whether the replicas run thrifty rounds (a quorum of nodes first) or every node in every round. */
  private final boolean thrifty;
  private final Random random;
  private final SimLoop loop = new SimLoop();
  private final List<SimHost> hosts = new ArrayList<>();
  private final SimChecker checker;
  private final SimNetwork network;
  /**
   * The node ids each replica gives its list (listed in its own order): the hosts' names, so
   * that both compute the same sets; {@link #idsFromPlaces} breaks that.
   */
  private java.util.function.BiFunction<Integer, List<SimHost>, List<String>> ids =
      (replica, listed) -> listed.stream().map(h -> h.name).toList();
  private long operations;
  /** The membership change this run makes, if any ({@link #membershipChange}). */
  private Change change;
  /** The mutant: replicas go from OLD alone to NEW alone with no joint step between. */
  private boolean skipJoint;
  /** Engines made so far: each new one takes the next wall clock and list order. */
  private int made;

  /**
   * A membership change of the Redis masters, over ten hosts with each resource on five: OLD is
   * hosts 0..8 (nine nodes), and NEW adds host 9, removes host 0, or replaces host 0 by host 9.
   */
  enum Change {
    ADD, REMOVE, REPLACE;

    List<SimHost> oldList(List<SimHost> hosts) {
      return hosts.subList(0, 9);
    }

    List<SimHost> newList(List<SimHost> hosts) {
      return switch (this) {
        case ADD -> hosts.subList(0, 10);
        case REMOVE -> hosts.subList(1, 9);
        case REPLACE -> hosts.subList(1, 10);
      };
    }
  }

  /**
   * A run whose replicas change the node list under load and faults, as an operator does: both
   * replicas run OLD, then one by one OLD and NEW (the joint step), then, once every replica of
   * OLD alone has stopped and {@code --max-ttl} has passed, one by one NEW. The change (add,
   * remove, replace) follows from the seed; so do the rounds (thrifty or every node).
   */
  static Simulation membershipChange(long seed) {
    Random random = new Random(seed);
    Simulation run = new Simulation(seed,
        new Shape(10, 6 + random.nextInt(10), 3 + random.nextInt(8), Duration.ofSeconds(20), true, 5), seed % 2 == 0);
    run.change = Change.values()[(int) (seed % 3)];
    return run;
  }

  /**
   * The mutant of a change with no joint step: one replica goes from OLD alone to NEW alone while
   * the other still runs OLD alone, for seconds. A resource's quorums under the two lists need not
   * meet, so two holders may be valid at once.
   */
  static Simulation skippingTheJointStep(long seed) {
    Simulation run = membershipChange(seed);
    run.skipJoint = true;
    return run;
  }

  Simulation(long seed) {
    this(seed, true);
  }

  Simulation(long seed, boolean thrifty) {
    this(seed, Shape.random(new Random(seed)), thrifty);
  }

  /**
   * A run whose nodes hide their clock steps from TIME (keys still expire by the stepped clock):
   * the engine without its clock watch, in effect. The mutant the suite must catch.
   */
  static Simulation blindToClockSteps(long seed) {
    Simulation run = new Simulation(seed);
    run.hosts.forEach(SimHost::hideClockSteps);
    return run;
  }

  /**
   * A thrifty run whose first node answers an acquire on a free lock as taken without taking it:
   * a grant then stands on q-1 nodes that hold it, the mutant of a grant with one vote short.
   */
  static Simulation grantingOneVoteShort(long seed) {
    Simulation run = new Simulation(seed, true);
    run.hosts.get(0).redis.mutate(LuaScript.load(LockEngine.class, "acquire"), source -> source.replace(
        "redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. fence .. ' ' .. ARGV[4] .. owner, 'PX', ARGV[2])",
        "-- MUTANT: votes yes without taking the lock"));
    return run;
  }

  /**
   * A thrifty run whose renewals count a node that holds another token's lock as one where the
   * lease was put back (restore.lua answers yes there, and the lock stays the other token's):
   * the mutant of a renewal that restores a quorum on a node holding another token. Writing over
   * the other token instead does no harm here: the engine counts a restore only within the
   * lease's validity, when no other token can hold a lock a quorum granted.
   */
  static Simulation restoringOnAnotherToken(long seed) {
    Simulation run = new Simulation(seed, true);
    LuaScript restore = LuaScript.load(LockEngine.class, "restore");
    for (SimHost host : run.hosts) {
      host.redis.mutate(restore, source -> source.replace("  return {0, incarnated, now[1], now[2]}\nend\nlocal fence",
          "  return {1, incarnated, now[1], now[2]} -- MUTANT\nend\nlocal fence"));
    }
    return run;
  }

  /** A run over nine nodes with each resource on five of them ({@link Shape#scaledOut}). */
  static Simulation scaledOut(long seed, boolean thrifty) {
    return new Simulation(seed, Shape.scaledOut(new Random(seed)), thrifty);
  }

  /**
   * A scaled-out run whose replicas name the nodes by where they stand in their own lists, which
   * are in different orders: the replicas then put a resource on different sets, whose quorums
   * need not meet. The mutant of ids that are not stable.
   */
  static Simulation idsFromPlaces(long seed) {
    Simulation run = scaledOut(seed, true);
    run.ids = (replica, listed) -> java.util.stream.IntStream.range(0, listed.size()).mapToObj(i -> "n" + i).toList();
    return run;
  }

  Simulation(long seed, Shape shape) {
    this(seed, shape, true);
  }

  Simulation(long seed, Shape shape, boolean thrifty) {
    this.seed = seed;
    this.shape = shape;
    this.thrifty = thrifty;
    this.random = new Random(seed * 31 + 7);
    this.network = new SimNetwork(loop, new Random(random.nextLong()), NODE_TIMEOUT.toNanos());
    double drift = config().driftFactor();
    for (int i = 0; i < shape.nodes(); i++) {
      hosts.add(new SimHost("node" + i, loop, rate(drift), 1_700_000_000_000L + random.nextInt(100_000)));
    }
    this.checker = new SimChecker(loop, hosts, PREFIX, shape.setSize());
  }

  static EngineConfig config() {
    return EngineConfig.defaults()
        .withMaxTtl(Duration.ofSeconds(3))
        .withRetryDelay(Duration.ofMillis(50))
        .withProbeInterval(Duration.ofMillis(200));
  }

  /** A clock rate within half the drift factor of true time: the engine's drift allowance covers it. */
  private double rate(double driftFactor) {
    return 1 + (random.nextDouble() * 2 - 1) * driftFactor / 2;
  }

  Result run() {
    BiConsumer<SimHost, String> lost = (host, token) -> {
      if (!token.isEmpty()) {
        checker.excuse(token);
      }
    };
    List<LockEngine> replicas = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      if (change != null) {
        replicas.add(engine(change.oldList(hosts), null, lost));
        continue;
      }
      SimExecutor executor = new SimExecutor(loop, rate(config().driftFactor()), random.nextLong() >>> 8,
          checker::crashed);
      List<RedisNode> links = new ArrayList<>();
      for (SimHost host : hosts) {
        links.add(new SimLink(loop, host, network, NODE_TIMEOUT.toNanos(), lost, checker::event, "replica" + r));
      }
      LockEngine.Builder builder = LockEngine.builder(links, config().withThriftyRounds(thrifty));
      if (shape.perKey() != 0) {
        // The second replica lists the nodes in another order: the sets must follow the ids, not the list.
        List<SimHost> listed = new ArrayList<>(hosts);
        if (r == 1) {
          java.util.Collections.shuffle(listed, new Random(seed * 17 + 3));
        }
        List<RedisNode> inOrder = listed.stream().map(h -> links.get(hosts.indexOf(h))).toList();
        builder = LockEngine.builder(inOrder, config().withThriftyRounds(thrifty))
            .nodeIds(ids.apply(r, listed))
            .nodesPerResource(shape.perKey());
      }
      LockEngine engine = builder
          .scheduler(executor)
          .nanoClock(executor.nanoClock())
          .wallMicros(wallClock(r))
          .jitter(new Random(random.nextLong()))
          .tokens(new SimClient.SeededRandom(random.nextLong()))
          .build();
      engine.startAsync(Duration.ofSeconds(1));
      replicas.add(engine);
    }
    List<String> resources = new ArrayList<>();
    for (int i = 0; i < shape.resources(); i++) {
      resources.add("res" + i);
    }
    List<SimClient> clients = new ArrayList<>();
    for (int c = 0; c < shape.clients(); c++) {
      SimClient client = new SimClient("client" + c, loop, replicas, resources, checker,
          new Random(random.nextLong()), () -> operations++);
      clients.add(client);
    }
    loop.runUntil(Duration.ofMillis(300).toNanos()); // the replicas start and seed the new cluster
    clients.forEach(SimClient::start);
    long end = loop.now() + shape.length().toNanos();
    audit(end);
    SimFaults faults = new SimFaults(loop, hosts, network, checker, random);
    if (shape.faults()) {
      faults.schedule(end, true);
    }
    if (change != null) {
      scheduleChange(replicas, lost);
    }
    loop.runUntil(end);
    faults.heal();
    clients.forEach(SimClient::stop);
    long drained = loop.now() + Duration.ofSeconds(10).toNanos();
    while (loop.now() < drained && !clients.stream().allMatch(SimClient::idle)) {
      loop.runUntil(loop.now() + Duration.ofMillis(100).toNanos());
    }
    loop.runUntil(loop.now() + Duration.ofSeconds(2).toNanos()); // late deliveries land
    loop.runUntil(loop.now() + faults.setBackNanos()); // keys live that much longer on clocks stepped back
    checker.leftBehind();
    replicas.forEach(LockEngine::close);
    return new Result(seed, operations, loop.eventsRun(), checker.violations(), checker.firstTrace());
  }

  /**
   * One replica over {@code old} alone ({@code next} null), or over {@code old} and {@code next}
   * together: the joint step of a membership change. Every other replica made lists the nodes in
   * another order (the sets follow the ids, not the list) and has the other wall clock.
   */
  private LockEngine engine(List<SimHost> old, List<SimHost> next, BiConsumer<SimHost, String> lost) {
    int r = made++;
    SimExecutor executor = new SimExecutor(loop, rate(config().driftFactor()), random.nextLong() >>> 8,
        checker::crashed);
    List<SimHost> listed = new ArrayList<>(old);
    if (next != null) {
      next.stream().filter(h -> !old.contains(h)).forEach(listed::add);
    }
    if (r % 2 == 1) {
      java.util.Collections.shuffle(listed, new Random(seed * 17 + r));
    }
    List<RedisNode> links = new ArrayList<>();
    for (SimHost host : listed) {
      links.add(new SimLink(loop, host, network, NODE_TIMEOUT.toNanos(), lost, checker::event, "replica" + r));
    }
    List<String> listedIds = ids.apply(r % 2, listed);
    LockEngine.Builder builder = LockEngine.builder(links, config().withThriftyRounds(thrifty))
        .nodeIds(listedIds)
        .nodesPerResource(shape.perKey());
    if (next != null) {
      builder.membership(old.stream().map(h -> listedIds.get(listed.indexOf(h))).toList(),
          next.stream().map(h -> listedIds.get(listed.indexOf(h))).toList());
    }
    LockEngine engine = builder
        .scheduler(executor)
        .nanoClock(executor.nanoClock())
        .wallMicros(wallClock(r % 2))
        .jitter(new Random(random.nextLong()))
        .tokens(new SimClient.SeededRandom(random.nextLong()))
        .build();
    engine.startAsync(Duration.ofSeconds(1));
    return engine;
  }

  /** A replica stopped by a rolling restart gets no more calls; its calls under way finish within this. */
  private static final long STOPPING_NANOS = Duration.ofSeconds(1).toNanos();

  /**
   * The change's rolling restarts: at a fifth of the run, each replica in turn (700 ms apart) is
   * replaced by one over OLD and NEW; once the last replica of OLD alone has stopped and
   * {@code --max-ttl} and a second more have passed, each in turn by one over NEW alone. The
   * mutant goes straight from OLD to NEW, and keeps the other replica on OLD for four seconds.
   */
  private void scheduleChange(List<LockEngine> replicas, BiConsumer<SimHost, String> lost) {
    List<SimHost> old = change.oldList(hosts);
    List<SimHost> next = change.newList(hosts);
    long first = loop.now() + shape.length().toNanos() / 5;
    if (skipJoint) {
      roll(replicas, 0, first, next, null, lost);
      roll(replicas, 1, first + Duration.ofSeconds(4).toNanos(), next, null, lost);
      return;
    }
    long gap = Duration.ofMillis(700).toNanos();
    roll(replicas, 0, first, old, next, lost);
    roll(replicas, 1, first + gap, old, next, lost);
    long newAlone = first + gap + STOPPING_NANOS + config().maxTtl().toNanos() + Duration.ofSeconds(1).toNanos();
    roll(replicas, 0, newAlone, next, null, lost);
    roll(replicas, 1, newAlone + gap, next, null, lost);
  }

  /** At {@code at}, replica {@code slot} is replaced by one over these lists, and the one it replaces stops. */
  private void roll(List<LockEngine> replicas, int slot, long at, List<SimHost> old, List<SimHost> next,
      BiConsumer<SimHost, String> lost) {
    loop.at(at, () -> {
      checker.event("CHANGE replica " + slot + " restarts with " + names(old)
          + (next == null ? " alone" : " and next " + names(next)));
      LockEngine stopping = replicas.set(slot, engine(old, next, lost));
      loop.after(STOPPING_NANOS, stopping::close);
    });
  }

  private static List<String> names(List<SimHost> hosts) {
    return hosts.stream().map(h -> h.name).toList();
  }

  /**
   * The replicas' wall clocks, which seed the fencing floor of rejoining nodes: the first keeps
   * time, the second is up to a minute behind (NTP not yet synced, a VM resumed).
   */
  private java.util.function.LongSupplier wallClock(int replica) {
    long behind = replica == 0 ? 0 : (long) (random.nextDouble() * 60_000_000);
    return () -> 1_700_000_000_000_000L + loop.now() / 1000 - behind;
  }

  private void audit(long end) {
    loop.after(Duration.ofMillis(50).toNanos(), () -> {
      checker.audit();
      if (loop.now() < end) {
        audit(end);
      }
    });
  }

  long operations() {
    return operations;
  }
}
