package dev.redlockd.it.chaos;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.RespClient;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Injects one fault at a time on a seeded random schedule and records each in the
 * {@link FaultTimeline}. Faults come in shuffled rounds of all five kinds, so even a short run
 * has every kind. Minority faults never leave fewer than a quorum of nodes able to vote
 * (counting nodes still quarantined after a restart); only {@link Fault#FREEZE_MAJORITY} takes
 * the quorum away, briefly.
 */
final class Nemesis {
  enum Fault {
    FREEZE_MINORITY,
    RESTART_NODE_EMPTY,
    SLOW_NODE,
    KILL_REPLICA,
    STOP_REPLICA,
    FREEZE_MAJORITY
  }

  /** A restarted node may be quarantined a little past --max-ttl (the probe that starts it runs every 500 ms). */
  private static final long QUARANTINE_SLACK_NANOS = TimeUnit.SECONDS.toNanos(2);

  private final RedisCluster cluster;
  private final Replicas replicas;
  private final FaultTimeline timeline;
  private final OpenStreams streams;
  private final Random random;
  private final long serverMaxTtlNanos;
  private final long runStartNanos;
  private final PrintStream log;
  private final long[] votesAgainAt;
  private final Map<Fault, Integer> injected = new EnumMap<>(Fault.class);
  private final List<String> actions = new ArrayList<>();
  private final Thread thread = new Thread(this::loop, "chaos-nemesis");
  private volatile boolean stopping;
  private volatile Throwable failure;
  private int nextReplica;

  Nemesis(RedisCluster cluster, Replicas replicas, FaultTimeline timeline, OpenStreams streams, long seed,
      Duration serverMaxTtl, long runStartNanos, PrintStream log) {
    this.cluster = cluster;
    this.replicas = replicas;
    this.timeline = timeline;
    this.streams = streams;
    this.random = new Random(seed);
    this.serverMaxTtlNanos = serverMaxTtl.toNanos();
    this.runStartNanos = runStartNanos;
    this.log = log;
    this.votesAgainAt = new long[cluster.size()];
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /**
   * Stops after the fault under way is healed, then makes sure every node runs unfrozen and
   * every replica is up, whatever happened. Rethrows a failure of the nemesis itself.
   */
  void stopAndHeal() throws InterruptedException {
    stopping = true;
    thread.join(TimeUnit.SECONDS.toMillis(60));
    cluster.resumeAll();
    for (int i = 0; i < cluster.size(); i++) {
      if (!cluster.node(i).isRunning()) {
        cluster.node(i).restart();
      }
    }
    if (thread.isAlive()) {
      throw new IllegalStateException("the nemesis did not stop within 60 s");
    }
    if (failure != null) {
      throw new IllegalStateException("the nemesis failed", failure);
    }
  }

  synchronized Map<Fault, Integer> injected() {
    Map<Fault, Integer> copy = new EnumMap<>(Fault.class);
    for (Fault f : Fault.values()) {
      copy.put(f, injected.getOrDefault(f, 0));
    }
    return copy;
  }

  synchronized List<String> actions() {
    return List.copyOf(actions);
  }

  private void loop() {
    List<Fault> round = new ArrayList<>();
    try {
      while (!stopping) {
        hold(between(400, 1200));
        if (stopping) {
          return;
        }
        if (round.isEmpty()) {
          round.addAll(List.of(Fault.values()));
          Collections.shuffle(round, random);
        }
        inject(round.remove(0));
      }
    } catch (Throwable t) {
      failure = t;
    }
  }

  private void inject(Fault fault) throws Exception {
    boolean done = switch (fault) {
      case FREEZE_MINORITY -> freeze(1 + random.nextInt(2), between(500, 2000), fault);
      case RESTART_NODE_EMPTY -> restartEmpty();
      case SLOW_NODE -> slow();
      case KILL_REPLICA -> killReplica();
      case STOP_REPLICA -> stopReplica();
      case FREEZE_MAJORITY -> freeze(cluster.size() / 2 + 1, between(300, 1200), fault);
    };
    if (done) {
      synchronized (this) {
        injected.merge(fault, 1, Integer::sum);
      }
    }
  }

  /** SIGSTOP on {@code count} nodes for a while, then SIGCONT. */
  private boolean freeze(int count, long holdMs, Fault fault) {
    boolean majority = fault == Fault.FREEZE_MAJORITY;
    List<Integer> nodes = majority ? pick(count, allNodes()) : pick(Math.min(count, spareVoters()), voters());
    if (nodes.isEmpty()) {
      note("%s skipped: no node can be spared (quarantines under way)", fault);
      return false;
    }
    int[] idx = nodes.stream().mapToInt(Integer::intValue).toArray();
    cluster.pause(idx);
    long from = System.nanoTime(); // kill -STOP has returned: the signal is delivered
    note("%s: froze nodes %s for %d ms", fault, nodes, holdMs);
    try {
      hold(holdMs);
    } finally {
      long to = System.nanoTime(); // before SIGCONT is sent
      cluster.resume(idx);
      for (int n : idx) {
        timeline.node(n, FaultTimeline.Kind.FROZEN, from, to);
      }
    }
    return true;
  }

  /** SIGKILL on one node, then a restart with no data: it must sit out its quarantine. */
  private boolean restartEmpty() {
    List<Integer> nodes = pick(Math.min(1, spareVoters()), voters());
    if (nodes.isEmpty()) {
      note("RESTART_NODE_EMPTY skipped: no node can be spared (quarantines under way)");
      return false;
    }
    int n = nodes.get(0);
    long downMs = between(200, 800);
    cluster.kill(n);
    long killed = System.nanoTime(); // the process has exited
    note("RESTART_NODE_EMPTY: killed node %d, restarting it empty in %d ms", n, downMs);
    long restarting;
    try {
      hold(downMs);
    } finally {
      restarting = System.nanoTime();
      cluster.node(n).restart();
      timeline.node(n, FaultTimeline.Kind.DEAD, killed, restarting);
      // It was empty from the moment it started listening, and a server can only start its
      // quarantine after seeing it: it cannot vote for at least --max-ttl from the restart.
      timeline.node(n, FaultTimeline.Kind.QUARANTINED, restarting, restarting + serverMaxTtlNanos);
      votesAgainAt[n] = restarting + serverMaxTtlNanos + QUARANTINE_SLACK_NANOS;
    }
    return true;
  }

  /** Bursts of CLIENT PAUSE on one node: its answers come late, some past the node timeout. */
  private boolean slow() throws IOException {
    List<Integer> nodes = pick(Math.min(1, spareVoters()), voters());
    if (nodes.isEmpty()) {
      note("SLOW_NODE skipped: no node can be spared (quarantines under way)");
      return false;
    }
    int n = nodes.get(0);
    long forMs = between(1000, 3000);
    note("SLOW_NODE: node %d answers late for %d ms", n, forMs);
    long from = System.nanoTime();
    long until = from + TimeUnit.MILLISECONDS.toNanos(forMs);
    try (RespClient admin = new RespClient("127.0.0.1", cluster.node(n).port(), 2000)) {
      while (!stopping && System.nanoTime() < until) {
        admin.call("CLIENT", "PAUSE", Long.toString(between(30, 90)));
        hold(between(60, 140));
      }
    } finally {
      // A pause issued last may still run for up to 90 ms.
      timeline.node(n, FaultTimeline.Kind.SLOW, from, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100));
    }
    return true;
  }

  /**
   * SIGKILL on a server replica, preferably while it carries KeepAlive streams (waiting up to
   * 3 s for one to open), then a new process in its place.
   */
  private boolean killReplica() throws InterruptedException {
    int r = nextReplica;
    nextReplica = (nextReplica + 1) % replicas.size();
    Set<String> kept = awaitKeptOn(r);
    long killed = System.nanoTime();
    replicas.kill(r);
    long downMs = between(300, 1000);
    note("KILL_REPLICA: SIGKILL replica %d with KeepAlive leases open on %s; restarting in %d ms", r, kept, downMs);
    try {
      hold(downMs);
    } finally {
      replicas.restart(r);
      timeline.replica(new FaultTimeline.ReplicaOutage(r, killed, System.nanoTime(), kept));
    }
    return true;
  }

  /**
   * SIGTERM on a server replica, preferably while it carries KeepAlive streams, then a new
   * process in its place: a rolling restart's step. Its streams end UNAVAILABLE and nothing it
   * kept is released, so no other client may be granted those resources while their holders
   * still count them as held.
   */
  private boolean stopReplica() throws InterruptedException {
    int r = nextReplica;
    nextReplica = (nextReplica + 1) % replicas.size();
    Set<String> kept = awaitKeptOn(r);
    long stopped = System.nanoTime();
    try {
      replicas.stop(r);
      note("STOP_REPLICA: SIGTERM replica %d with KeepAlive leases open on %s; restarting it", r, kept);
    } finally {
      replicas.restart(r);
      timeline.replica(new FaultTimeline.ReplicaOutage(r, stopped, System.nanoTime(), kept));
    }
    return true;
  }

  /** The resources kept alive through replica {@code r}, waiting up to 3 s for one to be. */
  private Set<String> awaitKeptOn(int r) throws InterruptedException {
    long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    Set<String> kept = streams.resourcesOn(r);
    while (kept.isEmpty() && !stopping && System.nanoTime() < waitUntil) {
      hold(20);
      kept = streams.resourcesOn(r);
    }
    return kept;
  }

  /** Nodes that vote now (not within a restart's quarantine). */
  private List<Integer> voters() {
    long now = System.nanoTime();
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      if (now >= votesAgainAt[i]) {
        out.add(i);
      }
    }
    return out;
  }

  /** How many voters a minority fault may take while a quorum still votes. */
  private int spareVoters() {
    int quorum = cluster.size() / 2 + 1;
    return Math.max(0, voters().size() - quorum);
  }

  private List<Integer> allNodes() {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      out.add(i);
    }
    return out;
  }

  private List<Integer> pick(int count, List<Integer> from) {
    List<Integer> shuffled = new ArrayList<>(from);
    Collections.shuffle(shuffled, random);
    List<Integer> picked = new ArrayList<>(shuffled.subList(0, Math.min(count, shuffled.size())));
    Collections.sort(picked);
    return picked;
  }

  private long between(int lowMs, int highMs) {
    return lowMs + random.nextInt(highMs - lowMs + 1);
  }

  /** Sleeps, cut short by a stop request (a fault under way is then healed at once). */
  private void hold(long millis) {
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (!stopping) {
      long left = until - System.nanoTime();
      if (left <= 0) {
        return;
      }
      try {
        TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private synchronized void note(String format, Object... args) {
    String line = String.format("t=%6.2fs nemesis %s", (System.nanoTime() - runStartNanos) / 1e9,
        String.format(format, args));
    actions.add(line);
    log.println(line);
  }
}
