package dev.redlockd.engine;

import dev.redlockd.node.RedisErrorReply;
import dev.redlockd.node.RedisNode;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Probes every node on a schedule: health (for the gRPC health service), the quarantine of a
 * node that restarted empty or whose clock stepped, and its rejoining once the quarantine is
 * served; and the nodes' clocks, for the {@link ClockWatch}, which every probe records on the
 * nodes.
 *
 * <p>Votes never depend on this class's view: every lock script checks the incarnation key
 * itself, and every round's replies pass through the clock watch. The monitor only drives the
 * transitions (start a quarantine, re-seed a node, decide that a cluster with no key anywhere
 * is new) and reports health.
 */
final class NodeMonitor implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(NodeMonitor.class);

  private final List<RedisNode> nodes;
  private final Keys keys;
  private final EngineConfig config;
  private final ScheduledExecutorService scheduler;
  private final LongSupplier wallMicros;
  private final LongSupplier nanoClock;
  private final SecureRandom random;
  private final ClockWatch clocks;
  /** The highest fence this server has seen a node hold or a round grant (see {@link #settle}). */
  private final java.util.concurrent.atomic.AtomicLong highestFence = new java.util.concurrent.atomic.AtomicLong();
  /** When the last round started; lock rounds that see a change ask for a probe at most this often. */
  private volatile long lastRoundNanos;
  private static final long MIN_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long START_PROBE_PAUSE_MS = 50;

  /** Written only by a probe round; rounds never overlap (see {@link #probing}). */
  private final Map<RedisNode, NodeState> states = new ConcurrentHashMap<>();
  /** Whether any node has been seen holding our keys; until then an all-blank cluster is new. */
  private volatile boolean clusterKnown;
  private volatile boolean quorumUp;
  /** How many other nodes, all voting, a rejoining node's fencing floor must be read from: see {@link #floorReaders}. */
  private final int floorReaders;
  private final AtomicBoolean probing = new AtomicBoolean();
  private final AtomicBoolean probeAgain = new AtomicBoolean();
  private final List<Consumer<Boolean>> quorumListeners = new CopyOnWriteArrayList<>();
  private volatile ScheduledFuture<?> schedule;
  /**
   * Set by {@link #close}: the node connections close next, and a round still under way would
   * read their closing as nodes gone down and say so.
   */
  private volatile boolean closed;
  /**
   * Nodes that answered at least once. Until then a silent node is only logged quietly: first
   * connections may miss the node timeout, and {@link #start} warns about one still silent.
   */
  private final Set<RedisNode> heardFrom = ConcurrentHashMap.newKeySet();
  /**
   * A cold JVM on a busy machine misses the node timeout now and then in its first seconds
   * (classes loading, code not yet compiled), which made every start report healthy nodes down
   * and up again. Until {@link #START_GRACE_NANOS} after start, a node that times out is called
   * down only once it has not answered for {@link #MISS_GRACE_NANOS}; a refused connection is
   * reported at once, and after the start-up grace every miss is.
   */
  static final long START_GRACE_NANOS = TimeUnit.SECONDS.toNanos(10);
  static final long MISS_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
  private volatile long startedNanos;
  private volatile boolean started;
  /** When each node last answered a probe (or when probing started, before its first answer). */
  private final Map<RedisNode, Long> lastAnswer = new ConcurrentHashMap<>();

  NodeMonitor(List<RedisNode> nodes, Keys keys, EngineConfig config, ScheduledExecutorService scheduler,
      LongSupplier wallMicros, LongSupplier nanoClock, SecureRandom random) {
    this(nodes, keys, config, scheduler, wallMicros, nanoClock, random, nodes.size());
  }

  /** {@code perKey}: how many nodes each key lives on ({@link Placements}). */
  NodeMonitor(List<RedisNode> nodes, Keys keys, EngineConfig config, ScheduledExecutorService scheduler,
      LongSupplier wallMicros, LongSupplier nanoClock, SecureRandom random, int perKey) {
    this.nodes = nodes;
    this.floorReaders = floorReaders(nodes.size(), perKey);
    this.keys = keys;
    this.config = config;
    this.scheduler = scheduler;
    this.wallMicros = wallMicros;
    this.nanoClock = nanoClock;
    this.random = random;
    this.lastRoundNanos = nanoClock.getAsLong() - MIN_GAP_NANOS;
    nodes.forEach(n -> states.put(n, NodeState.UNKNOWN));
    this.clocks = new ClockWatch(nodes, config, nanoClock);
    // A reply that shows a step is answered by a probe at once: it quarantines the node.
    clocks.onProbeWanted(this::requestProbe);
  }

  /**
   * How many of the other N-1 nodes must answer, voting, for a rejoining node's floor to cover
   * every fence granted: a grant left its fence on q = n/2+1 nodes of its key's set, so on at
   * least q-1 nodes besides the rejoining one, and any N-q+1 of the other N-1 nodes meet those.
   * Never fewer than a quorum of all N, the rule before sets (the same number when n = N is odd).
   */
  static int floorReaders(int nodeCount, int perKey) {
    return Math.max(Tally.quorumOf(nodeCount), nodeCount - Tally.quorumOf(perKey) + 1);
  }

  /** A fence a node reported or a round granted: no node is re-seeded below it. */
  void sawFence(long fence) {
    highestFence.accumulateAndGet(fence, Math::max);
  }

  /** The nodes' clocks, as this replica watches them: every round's replies pass through it. */
  ClockWatch clocks() {
    return clocks;
  }

  /**
   * Probes until a quorum votes or {@code startWait} runs out, then on the probe interval.
   * One round may not be enough: first connections to a node can miss the node timeout, and
   * a new cluster is initialised only once every node has answered. Completes when the
   * periodic probe is scheduled; nothing blocks, so a simulated scheduler can drive it.
   */
  CompletableFuture<Void> start(Duration startWait) {
    warnAboutEviction();
    startedNanos = nanoClock.getAsLong();
    nodes.forEach(n -> lastAnswer.put(n, startedNanos));
    started = true;
    long deadline = nanoClock.getAsLong() + startWait.toNanos();
    CompletableFuture<Void> formed = new CompletableFuture<>();
    probeUntilQuorum(deadline, formed);
    return formed.thenRun(() -> {
      for (RedisNode node : nodes) {
        if (!heardFrom.contains(node)) {
          log.warn("Redis node {} is down: it has not answered since start-up", node.name());
        }
      }
      if (!quorumUp) {
        log.warn("Starting without a quorum of voting Redis nodes after {} ms: calls fail with UNAVAILABLE "
            + "and health says NOT_SERVING until it forms", startWait.toMillis());
      }
      long every = config.probeInterval().toNanos();
      schedule = scheduler.scheduleWithFixedDelay(this::probeRound, every, every, TimeUnit.NANOSECONDS);
    });
  }

  private void probeUntilQuorum(long deadline, CompletableFuture<Void> formed) {
    probeRound().whenComplete((ignored, failure) -> {
      if (quorumUp || nanoClock.getAsLong() >= deadline) {
        formed.complete(null);
      } else {
        scheduler.schedule(() -> probeUntilQuorum(deadline, formed), START_PROBE_PAUSE_MS, TimeUnit.MILLISECONDS);
      }
    });
  }

  boolean quorumUp() {
    return quorumUp;
  }

  Map<RedisNode, NodeState> states() {
    return Map.copyOf(states);
  }

  /** Whether the node was UP at the last word on it: a thrifty round asks the others last. */
  boolean up(RedisNode node) {
    return states.get(node) == NodeState.UP;
  }

  void onQuorumChange(Consumer<Boolean> listener) {
    quorumListeners.add(listener);
  }

  /**
   * Looks at the replies of a lock round: a node that answered without its incarnation key,
   * or did not answer, while believed UP gets probed at once instead of at the next tick.
   */
  <T> void observe(List<NodeResult<T>> results, Predicate<T> incarnated) {
    for (NodeResult<T> r : results) {
      if (!r.sent()) {
        continue; // a thrifty round did not ask it: nothing learnt
      }
      boolean fine = r.answered() && incarnated.test(r.value());
      if (fine != (states.get(r.node()) == NodeState.UP)) {
        if (nanoClock.getAsLong() - lastRoundNanos >= MIN_GAP_NANOS) {
          requestProbe();
        }
        return;
      }
    }
  }

  void requestProbe() {
    scheduler.execute(this::probeRound);
  }

  private CompletableFuture<Void> probeRound() {
    if (closed) {
      return CompletableFuture.completedFuture(null);
    }
    if (!probing.compareAndSet(false, true)) {
      probeAgain.set(true);
      return CompletableFuture.completedFuture(null);
    }
    long sent = nanoClock.getAsLong();
    lastRoundNanos = sent;
    String mode = clusterKnown ? "act" : "peek";
    String maxTtl = Long.toString(config.maxTtl().toMillis());
    return NodeResult.fromAll(nodes,
            // The id a node that has none takes: random per node, so that no two share one.
            node -> node.eval(Scripts.PROBE, keys.forProbe(), List.of(maxTtl, mode,
                    Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong())))
                .thenApply(reply -> Replies.probe(reply, nanoClock.getAsLong())))
        .thenCompose(results -> settle(sent, results))
        .handle((ignored, failure) -> {
          if (failure != null) {
            log.warn("probe round failed", failure);
          }
          probing.set(false);
          if (probeAgain.getAndSet(false)) {
            requestProbe();
          }
          return null;
        });
  }

  private CompletableFuture<Void> settle(long sent, List<NodeResult<Replies.Probe>> results) {
    if (closed) {
      return CompletableFuture.completedFuture(null);
    }
    List<ClockWatch.ProbeSample> samples = new ArrayList<>();
    for (NodeResult<Replies.Probe> r : results) {
      if (r.answered()) {
        Replies.Probe p = r.value();
        samples.add(new ClockWatch.ProbeSample(r.node(), p.receivedNanos(), p.nodeMicros(), p.id(), p.clocks()));
      }
    }
    Map<RedisNode, Long> steps = clocks.probe(sent, samples);
    boolean allBlank = results.stream().allMatch(r -> r.answered() && "blank".equals(r.value().state()));
    boolean anyKnown = results.stream().anyMatch(r -> r.answered() && !"blank".equals(r.value().state()));
    // A node that rejoins starts its counters above every fence any answering node has
    // granted, above every fence this server has seen granted or stored since it started (the
    // nodes that held one may all have lost their data since, and a node quarantined for its
    // clock keeps its data but missed the fences granted meanwhile), and above the wall clock in
    // microseconds: counters rise far slower than that (each step is a Redis round trip), so
    // fences keep rising even if every node lost its data.
    results.stream().filter(NodeResult::answered).forEach(r -> sawFence(r.value().fenceMax()));
    long floor = Math.max(wallMicros.getAsLong(), highestFence.get());
    // Every fence granted was raised on a quorum of its key's set, of which the rejoining node is
    // at most one: floorReaders other nodes, all voting, meet the rest of it. When every node answers,
    // the nodes that kept their data have all been read (the others lost theirs, and the wall
    // clock stands in for it). Otherwise a silent node may hold a fence above every answer,
    // so the node waits for a later probe.
    long voting = results.stream().filter(r -> r.answered() && "up".equals(r.value().state())).count();
    boolean floorKnown = voting >= floorReaders || results.stream().allMatch(NodeResult::answered);

    List<CompletableFuture<Void>> transitions = new ArrayList<>();
    if (!clusterKnown && allBlank) {
      log.warn("No Redis node holds an incarnation key: treating the {} nodes as a new cluster and "
          + "starting at once (fencing tokens start at {})", nodes.size(), floor + 1);
      for (NodeResult<Replies.Probe> r : results) {
        heardFrom.add(r.node());
        transitions.add(seed(r.node(), floor, "joins the new cluster"));
      }
      clusterKnown = true;
    } else {
      if (anyKnown && !clusterKnown) {
        clusterKnown = true;
        // Blank nodes of a known cluster lost their data: the next round (in "act" mode)
        // starts their quarantine.
        probeAgain.set(true);
      }
      for (NodeResult<Replies.Probe> r : results) {
        Long step = steps.get(r.node());
        transitions.add(step != null ? quarantineClock(r.node(), step) : settleOne(r, floor, floorKnown));
      }
    }
    return CompletableFuture.allOf(transitions.toArray(CompletableFuture[]::new))
        .thenRun(() -> {
          updateQuorum();
          recordClocks(sent, samples);
        });
  }

  /**
   * The node's clock stepped: it is quarantined on the node, so that no replica counts it until
   * every lease granted before the step has run out. Until that lands this replica does not
   * count it either (the clock watch holds the step), and the next probe tries again.
   */
  private CompletableFuture<Void> quarantineClock(RedisNode node, long step) {
    lastAnswer.put(node, nanoClock.getAsLong());
    heardFrom.add(node);
    String why = "clock " + (step > 0 ? "+" : "-") + Math.max(1, Math.abs(step) / 1_000_000);
    return node.eval(Scripts.QUARANTINE, keys.forQuarantine(), List.of(Long.toString(config.maxTtl().toMillis()), why))
        .handle((reply, failure) -> {
          if (failure != null) {
            log.warn("Redis node {} could not be quarantined for its clock step ({}): this server does not count "
                + "it, and tries again at the next probe", node.name(), describe(failure));
          } else {
            clocks.quarantined(node);
          }
          transition(node, NodeState.QUARANTINED, previous -> "is quarantined: " + clockWhy(why)
              + " and votes again in " + config.maxTtl().toMillis() + " ms, once every lock granted before its clock "
              + "stepped has expired");
          return null;
        });
  }

  /** "its clock stepped forward by 30.012 s" from a quarantine's reason as quarantine.lua keeps it. */
  private static String clockWhy(String why) {
    String signed = why.substring("clock ".length());
    long millis;
    try {
      millis = Long.parseLong(signed.replace("+", ""));
    } catch (NumberFormatException e) {
      return "its clock stepped";
    }
    return "its clock stepped " + (millis >= 0 ? "forward" : "back") + " by "
        + ClockWatch.describe(Math.abs(millis) * 1_000_000);
  }

  /** Records the clocks this replica trusts on those nodes, for replicas that start later (see ClockRecords). */
  private void recordClocks(long sent, List<ClockWatch.ProbeSample> samples) {
    ClockWatch.Record record = clocks.record(sent, samples);
    if (record == null) {
      return;
    }
    for (RedisNode node : record.on()) {
      node.command("SET", keys.nodeClocks(), record.text()); // a lost one is replaced at the next probe
    }
  }

  private CompletableFuture<Void> settleOne(NodeResult<Replies.Probe> r, long floor, boolean floorKnown) {
    if (!r.answered()) {
      down(r.node(), r.failure());
      return CompletableFuture.completedFuture(null);
    }
    Replies.Probe probe = r.value();
    lastAnswer.put(r.node(), nanoClock.getAsLong());
    boolean firstAnswer = heardFrom.add(r.node());
    switch (probe.state()) {
      case "up" -> transition(r.node(), NodeState.UP, previous -> firstAnswer ? "is up" : upAgain(previous));
      case "quarantined" -> transition(r.node(), NodeState.QUARANTINED, previous -> {
        boolean clock = probe.why().startsWith("clock ");
        return "is quarantined: "
            + (clock
                ? clockWhy(probe.why()) + " (seen by a server of these nodes)"
                // A node just added and one that restarted without its data look the same: no key of ours.
                : "it holds no incarnation key (an empty node: newly added, or restarted without its data)")
            + " and votes again in " + probe.quarantineMillisLeft() + " ms (at "
            + java.time.Instant.ofEpochMilli(wallMicros.getAsLong() / 1000 + probe.quarantineMillisLeft())
                .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
            + "), once every lock granted before " + (clock ? "its clock stepped" : "it was found empty")
            + " has expired";
      });
      case "served" -> {
        if (!floorKnown) {
          transition(r.node(), NodeState.QUARANTINED, previous -> "has served its quarantine and rejoins once a "
              + "quorum of the other nodes, or every node, answers (its fencing floor is taken from them)");
          return CompletableFuture.completedFuture(null);
        }
        return seed(r.node(), floor, "rejoined: its quarantine is served, it votes again");
      }
      default -> transition(r.node(), NodeState.BLANK, previous ->
          "holds no redlockd keys; waiting for every node to answer before treating the cluster as new");
    }
    return CompletableFuture.completedFuture(null);
  }

  private CompletableFuture<Void> seed(RedisNode node, long floor, String joined) {
    String incarnation = Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
    return node.eval(Scripts.SEED, keys.forSeed(), List.of(incarnation, Long.toString(floor)))
        .handle((reply, failure) -> {
          if (failure != null) {
            down(node, failure);
          } else if (Replies.number(reply) < 0) {
            transition(node, NodeState.QUARANTINED, previous -> "is still quarantined");
          } else {
            transition(node, NodeState.UP, previous -> joined + " (fencing floor " + floor + ")");
          }
          return null;
        });
  }

  /** Another server sharing the nodes may have re-seeded a node this one saw quarantined. */
  private static String upAgain(NodeState previous) {
    return switch (previous) {
      case DOWN -> "is up again";
      case QUARANTINED -> "rejoined: its quarantine is served, it votes again";
      default -> "is up";
    };
  }

  private void down(RedisNode node, Throwable failure) {
    if (coldMiss(node, failure)) {
      return; // its state stays; the next probes decide
    }
    if (heardFrom.contains(node)) {
      transition(node, NodeState.DOWN, previous -> "is down: it does not answer (" + describe(failure) + ")");
    } else if (states.put(node, NodeState.DOWN) != NodeState.DOWN) {
      log.info("Redis node {} does not answer yet ({})", node.name(), describe(failure));
    }
  }

  /** A timeout in the start-up grace, from a node that answered (or started being probed) less than a second ago. */
  private boolean coldMiss(RedisNode node, Throwable failure) {
    long now = nanoClock.getAsLong();
    return started && "timed out".equals(describe(failure))
        && now - startedNanos < START_GRACE_NANOS
        && now - lastAnswer.getOrDefault(node, startedNanos) < MISS_GRACE_NANOS;
  }

  /**
   * One line per change of a node's state, never per probe: a node down for an hour logs once.
   * The line names the node by host:port only.
   */
  private void transition(RedisNode node, NodeState next, Function<NodeState, String> what) {
    NodeState previous = states.put(node, next);
    if (previous != next) {
      if (next == NodeState.DOWN || next == NodeState.QUARANTINED) {
        log.warn("Redis node {} {}", node.name(), what.apply(previous));
      } else {
        log.info("Redis node {} {}", node.name(), what.apply(previous));
      }
    }
  }

  /**
   * A quorum of all N nodes voting. With every key on every node, that is every key's quorum.
   * With sets of n < N, it is the point above which more than half of the sets have a quorum
   * voting: with n odd, a set has a majority voting or a majority not voting, and sets are
   * drawn evenly over the nodes, so the share of sets with a quorum passes one half where the
   * voting nodes pass N/2. Below it most keys are refused; above it a few still may be, when
   * more than n/2 of their own nodes are out (docs/engine.md, "Replica sets").
   */
  private void updateQuorum() {
    long up = states.values().stream().filter(s -> s == NodeState.UP).count();
    boolean now = up >= Tally.quorumOf(nodes.size());
    if (now != quorumUp) {
      quorumUp = now;
      if (now) {
        log.info("Quorum available: {} of {} Redis nodes vote", up, nodes.size());
      } else {
        log.warn("Quorum lost: {} of {} Redis nodes vote, {} needed", up, nodes.size(),
            Tally.quorumOf(nodes.size()));
      }
      quorumListeners.forEach(l -> l.accept(now));
    }
  }

  /**
   * Lock keys carry a TTL, so any eviction policy but noeviction may drop a held lock. A node
   * that refuses CONFIG GET (an ACL user without +config|get, a managed Redis that hides CONFIG)
   * is not checked, and the log says so once, as what it is: nothing wrong with the node.
   */
  private void warnAboutEviction() {
    for (RedisNode node : nodes) {
      node.command("CONFIG", "GET", "maxmemory*").handle((reply, failure) -> {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
          cause = cause.getCause();
        }
        if (cause instanceof RedisErrorReply refused) {
          log.info("Redis node {} refuses CONFIG GET ({}): its maxmemory-policy, which could evict held locks, is "
              + "not checked; allow +config|get to redlockd's user to check it", node.name(), refused.getMessage());
        } else if (failure == null && reply instanceof List<?> list) {
          String maxmemory = valueOf(list, "maxmemory");
          String policy = valueOf(list, "maxmemory-policy");
          if (!"0".equals(maxmemory) && maxmemory != null && !"noeviction".equals(policy)) {
            log.warn("Redis node {} has maxmemory {} with maxmemory-policy {}: it may evict held locks; "
                + "use noeviction", node.name(), maxmemory, policy);
          }
        }
        return null;
      });
    }
  }

  private static String valueOf(List<?> flat, String name) {
    for (int i = 0; i + 1 < flat.size(); i += 2) {
      if (name.equals(String.valueOf(flat.get(i)))) {
        return String.valueOf(flat.get(i + 1));
      }
    }
    return null;
  }

  private static String describe(Throwable failure) {
    Throwable cause = failure;
    while (cause.getCause() != null && cause instanceof CompletionException) {
      cause = cause.getCause();
    }
    if (cause instanceof TimeoutException) {
      return "timed out";
    }
    String message = cause.getMessage();
    return cause.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }

  @Override
  public void close() {
    closed = true;
    ScheduledFuture<?> s = schedule;
    if (s != null) {
      s.cancel(false);
    }
  }
}
