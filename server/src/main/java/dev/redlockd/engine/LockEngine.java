package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import dev.redlockd.node.ScriptBatch;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The Redlock engine: acquire, extend and release leases over N independent Redis masters.
 * Knows nothing of gRPC. Every method validates its input ({@link InvalidRequestException})
 * and completes asynchronously; failures are the typed {@link LockEngineException}s.
 */
public final class LockEngine implements AutoCloseable {
  private final List<RedisNode> nodes;
  private final EngineConfig config;
  private final RequestRules rules;
  private final NodeMonitor monitor;
  private final NodeEvents events;
  private final Leases locks;
  private final Leases elections;
  private final Leases semaphores;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final AtomicInteger waitingCalls = new AtomicInteger();
  private final Backlog backlog;
  private final Placements placements;
  /** The records of which node list(s) this replica runs, when asked for ({@link Builder#recordMembership}). */
  private final MembershipRecords membership;

  private LockEngine(Builder b) {
    this.nodes = List.copyOf(b.nodes);
    this.config = b.config;
    this.rules = new RequestRules(config);
    this.ownsScheduler = b.scheduler == null;
    this.scheduler = ownsScheduler ? defaultScheduler() : b.scheduler;
    Keys keys = new Keys(config.keyPrefix());
    List<String> ids = b.nodeIds != null ? b.nodeIds : nodes.stream().map(RedisNode::name).toList();
    int perKey;
    int perNew = 0;
    boolean[] inOld;
    boolean[] inNew = null;
    if (b.oldIds == null) {
      perKey = nodesPerResource(nodes.size(), b.nodesPerResource);
      this.placements = new Placements(nodes, ids, perKey);
      inOld = new boolean[nodes.size()];
      java.util.Arrays.fill(inOld, true);
    } else {
      inOld = in(ids, b.oldIds);
      inNew = in(ids, b.newIds);
      perKey = nodesPerResource(b.oldIds.size(), b.nodesPerResource);
      perNew = nodesPerResource(b.newIds.size(), b.nodesPerResource);
      this.placements = new Placements(nodes, ids, inOld, inNew, perKey, perNew);
    }
    this.membership = b.recordMembership
        ? new MembershipRecords(nodes, ids, inOld, inNew, perKey, perNew, keys, config,
        b.heartbeat) : null;
    this.monitor = new NodeMonitor(nodes, keys, config, scheduler, b.wallMicros, b.nanoClock, b.tokens, perKey);
    this.events = new NodeEvents(nodes, b.notices);
    this.backlog = new Backlog(b.nanoClock);
    Leases.Shared shared = new Leases.Shared(config, events, scheduler, b.nanoClock, b.jitter, b.tokens,
        waitingCalls, backlog);
    this.locks = space(shared, rules, keys, b);
    this.elections = space(shared, rules.forElections(), keys.inSpace(Keys.ELECTIONS), b);
    this.semaphores = space(shared, rules.forSemaphores(), keys.inSpace(Keys.SEMAPHORES), b);
  }

  /** Per id of {@code ids}, whether it is one of {@code listed}. */
  private static boolean[] in(List<String> ids, List<String> listed) {
    boolean[] in = new boolean[ids.size()];
    for (String id : listed) {
      int at = ids.indexOf(id);
      if (at < 0) {
        throw new IllegalArgumentException("node id '" + id + "' is not one of the nodes' ids " + ids);
      }
      in[at] = true;
    }
    return in;
  }

  private Leases space(Leases.Shared shared, RequestRules spaceRules, Keys keys, Builder b) {
    Redlock redlock = new Redlock(nodes, keys, config, b.nanoClock, monitor, b.tokens.nextLong(), backlog,
        b.wallMicros, placements);
    return new Leases(shared, spaceRules, keys, redlock, new OperatorRounds(keys, monitor, placements));
  }

  /**
   * How many nodes each resource lives on for {@code asked} (0: the default, every node) over
   * {@code nodeCount} nodes; an IllegalArgumentException with a one-line reason when it is not
   * odd and in 1..N (N itself may be even).
   */
  public static int nodesPerResource(int nodeCount, int asked) {
    int n = asked == 0 ? Placements.defaultPerKey(nodeCount) : asked;
    Placements.check(nodeCount, n);
    return n;
  }

  /** What the nodes should batch: the engine's scripts, called one pass of a loop at a time. */
  public static ScriptBatch scriptBatch() {
    return Scripts.BATCH;
  }

    public static Builder builder(List<RedisNode> nodes, EngineConfig config) {
    return new Builder(nodes, config);
  }

  /**
   * Probes the nodes until a quorum votes (at most {@code startWait}) and starts the periodic
   * probe. The engine works either way; without a quorum its calls fail with UNAVAILABLE.
   */
  public LockEngine start(Duration startWait) {
    return startAsync(startWait).join();
  }

  /** As {@link #start(Duration)}, without blocking the caller: the probes run on the engine's scheduler. */
  public CompletableFuture<LockEngine> startAsync(Duration startWait) {
    return monitor.start(startWait).thenApply(ignored -> this);
  }

  public LockEngine start() {
    return start(Duration.ofSeconds(5));
  }

  /**
   * Takes the lock, retrying while it is held by someone else until {@code wait} runs out.
   * An empty {@code token} makes the engine choose one. See {@link Leases#acquire}.
   */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token) {
    return locks.acquire(resource, ttl, wait, token, "");
  }

  /** See {@link Leases#acquire}. */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token, String owner) {
    return locks.acquire(resource, ttl, wait, token, owner);
  }

  /** See {@link Leases#acquire(String, Duration, Duration, String, String, String)}. */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token, String owner,
      String holder) {
    return locks.acquire(resource, ttl, wait, token, owner, holder);
  }

  /** See {@link Leases#acquire(String, Duration, Duration, String, String, String, Duration)}. */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token, String owner,
      String holder, Duration callerLeavesIn) {
    return locks.acquire(resource, ttl, wait, token, owner, holder, callerLeavesIn);
  }

  /** See {@link Leases#acquire(String, Duration, Duration, String, String, String, Duration, AcquireObserver)}. */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token, String owner,
      String holder, Duration callerLeavesIn, AcquireObserver observer) {
    return locks.acquire(resource, ttl, wait, token, owner, holder, callerLeavesIn, observer);
  }

  /** Takes the lock, or a permit of the semaphore, that {@code request} names; see {@link Leases#acquire}. */
  public CompletableFuture<Grant> acquire(LeaseRequest request, AcquireObserver observer) {
    return request.permits() == 0
        ? locks.acquire(request.resource(), request.ttl(), request.waitUpTo(), request.token(), request.owner(),
            request.holder(), request.callerLeavesIn(), observer)
        : semaphores.acquirePermit(request.resource(), request.permits(), request.ttl(), request.waitUpTo(),
            request.token(), request.owner(), request.holder(), request.callerLeavesIn(), observer);
  }

  /**
   * The lock and the semaphore on {@code resource}, read side by side. A bad name is refused in a
   * lock's words (as Describe refused it before semaphores).
   */
  public CompletableFuture<NameDescription> describeName(String resource) {
    try {
      rules.resource(resource);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<LockDescription> lock = locks.describe(resource);
    return semaphores.describeSemaphore(resource).thenCombine(lock, (semaphore, held) ->
        new NameDescription(held, semaphore));
  }

  /** See {@link Leases#extend}. */
  public CompletableFuture<Grant> extend(String resource, String token, Duration ttl) {
    return locks.extend(resource, token, ttl);
  }

  /** See {@link Leases#release}. */
  public CompletableFuture<Boolean> release(String resource, String token) {
    return locks.release(resource, token);
  }

  /** See {@link Leases#describe}. */
  public CompletableFuture<LockDescription> describe(String resource) {
    return locks.describe(resource);
  }

  /** See {@link Leases#forceRelease}. */
  public CompletableFuture<Boolean> forceRelease(String resource) {
    return locks.forceRelease(resource);
  }

  /** See {@link Leases#keep}. */
  public KeptLease keep(String resource, String token, Duration ttl, KeptLease.Listener listener) {
    return locks.keep(resource, token, ttl, listener);
  }

  /**
   * Takes one of {@code permits} permits (1..1024) of the semaphore on {@code resource}. See
   * {@link Leases#acquirePermit}; the grant's {@link Grant#permit()} says which permit.
   */
  public CompletableFuture<Grant> acquirePermit(String resource, int permits, Duration ttl, Duration wait,
      String token, String owner, String holder, Duration callerLeavesIn) {
    return semaphores.acquirePermit(resource, permits, ttl, wait, token, owner, holder, callerLeavesIn);
  }

  /** {@link #acquirePermit(String, int, Duration, Duration, String, String, String, Duration)}, observed. */
  public CompletableFuture<Grant> acquirePermit(String resource, int permits, Duration ttl, Duration wait,
      String token, String owner, String holder, Duration callerLeavesIn, AcquireObserver observer) {
    return semaphores.acquirePermit(resource, permits, ttl, wait, token, owner, holder, callerLeavesIn, observer);
  }

  /** Extends the lock (permit 0) or the semaphore's permit (1..1024) that {@code token} holds. */
  public CompletableFuture<Grant> extend(String resource, int permit, String token, Duration ttl) {
    return permit == 0 ? locks.extend(resource, token, ttl) : semaphores.extend(resource, permit, token, ttl);
  }

  /** Releases the lock (permit 0) or the semaphore's permit (1..1024) that {@code token} holds. */
  public CompletableFuture<Boolean> release(String resource, int permit, String token) {
    return permit == 0 ? locks.release(resource, token) : semaphores.release(resource, permit, token);
  }

  /** Keeps the lock (permit 0) or the semaphore's permit (1..1024) alive; see {@link Leases#keep}. */
  public KeptLease keep(String resource, int permit, String token, Duration ttl, KeptLease.Listener listener) {
    return permit == 0 ? locks.keep(resource, token, ttl, listener)
        : semaphores.keep(resource, permit, token, ttl, listener);
  }

  /** Deletes the lock (permit 0) or that permit of the semaphore (1..1024), whatever its token. */
  public CompletableFuture<Boolean> forceRelease(String resource, int permit) {
    return permit == 0 ? locks.forceRelease(resource) : semaphores.forceRelease(resource, permit);
  }

  /** See {@link Leases#describeSemaphore}. */
  public CompletableFuture<SemaphoreDescription> describeSemaphore(String resource) {
    return semaphores.describeSemaphore(resource);
  }

  /** The semaphores' permits: a space of their own, so a semaphore and a lock on one name are separate. */
  public Leases semaphores() {
    return semaphores;
  }

  /** The user's locks: what the methods above act on. */
  public Leases locks() {
    return locks;
  }

  /** The elections' leases: the same rules in a space of their own, where an election's name is the resource. */
  public Leases elections() {
    return elections;
  }

  public RequestRules rules() {
    return rules;
  }

  public EngineConfig config() {
    return config;
  }

  public int nodeCount() {
    return nodes.size();
  }

  /**
   * A quorum of all N nodes: N/2+1. With every key on every node, how many must vote yes; with
   * sets, how many must vote for more than half of the sets to have a quorum (see
   * {@link #quorumAvailable()}).
   */
  public int quorum() {
    return Tally.quorumOf(nodes.size());
  }

  /**
   * Writes this replica's membership record on the nodes, reading every record there in the
   * same call, and throws {@link MembershipRefusedException} (one line: the lists, how long to
   * wait) when this replica's node list(s) would break the change they show; else keeps writing
   * its record every heartbeat. Blocks for one round trip. Needs {@link Builder#recordMembership}.
   */
  public void checkMembership() {
    if (membership == null) {
      throw new IllegalStateException("membership records were not asked for (Builder.recordMembership)");
    }
    // One call per node writes the record and reads the others atomically (membership.lua): of
    // two replicas starting at once, the one whose call runs second on a node they share sees
    // the other's record there, with no wait between writing and reading.
    MembershipRecords.View view = membership.beat().join();
    membership.refusal(view).ifPresent(why -> {
      throw new MembershipRefusedException(why);
    });
    if (!view.quorumsAnswered()) {
      org.slf4j.LoggerFactory.getLogger(LockEngine.class).warn("Fewer than a quorum of {} answered the "
          + "membership records: this replica cannot tell yet whether a membership change is under way, and "
          + "checks again every heartbeat (a conflict is logged and counted in redlockd_membership_conflict)",
          membershipChanging() ? "each node list" : "the Redis nodes");
    }
    membership.start(scheduler);
  }

  /**
   * During the joint step (--redis-next), how long a record of a replica running the old list
   * alone lives on in the nodes: a lease granted under the old list alone may be valid that long.
   * Step three (the new list alone) may start at zero. Zero outside a change or without records.
   */
  public Duration membershipOldAloneRemaining() {
    return membership == null ? Duration.ZERO : membership.oldAloneRemaining();
  }

  /** Whether the last heartbeat found on the nodes a record this replica's node list(s) conflict with. */
  public boolean membershipConflict() {
    return membership != null && membership.conflict();
  }

  /**
   * Whether a membership change is under way (--redis-next): each key's rounds need a quorum of
   * its set under the old list and of its set under the new one.
   */
  public boolean membershipChanging() {
    return placements.joint();
  }

  /** How many nodes each resource, permit and leadership lives on (its quorum is a majority of them). */
  public int nodesPerResource() {
    return placements.perKey();
  }

  /** Acquire calls with a wait under way now: the count {@code maxWaitingAcquires} limits. */
  public int waitingAcquires() {
    return waitingCalls.get();
  }

  /** How far behind the engine's rounds run: what the server's admission control reads. */
  public Backlog backlog() {
    return backlog;
  }

  /**
   * Whether a quorum of all N nodes voted at the last probe: with sets, whether more than half
   * of the sets have a quorum voting.
   */
  public boolean quorumAvailable() {
    return monitor.quorumUp();
  }

  /** Called with the new value each time {@link #quorumAvailable()} changes. */
  public void onQuorumChange(Consumer<Boolean> listener) {
    monitor.onQuorumChange(listener);
  }

  /**
   * Called with every step of a Redis node's wall clock this server sees (on an engine or I/O
   * thread): the node is quarantined for it.
   */
  public void onClockStep(Consumer<ClockStep> listener) {
    monitor.clocks().onStep(listener);
  }

  /**
   * Each node's clock rate against this server's monotonic clock, minus 1 (0.001: 0.1 % fast),
   * where one was measured (over a minute or more of replies).
   */
  public Map<String, Double> nodeClockRates() {
    return monitor.clocks().rates();
  }

  /** The monitor's view of each node, by node name. */
  public Map<String, NodeState> nodeStates() {
    Map<String, NodeState> byName = new LinkedHashMap<>();
    monitor.states().forEach((node, state) -> byName.put(node.name(), state));
    return byName;
  }

  /** Stops probing; the nodes are closed by whoever made them. */
  @Override
  public void close() {
    if (membership != null) {
      membership.close();
    }
    monitor.close();
    events.close();
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  private static ScheduledExecutorService defaultScheduler() {
    ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "redlockd-engine");
      t.setDaemon(true);
      return t;
    });
    // Retries of waiting Acquire calls are cancelled often (wake-ups, deadlines): drop them at once.
    s.setRemoveOnCancelPolicy(true);
    return s;
  }

  /** Clock, scheduler and randomness are injectable so tests can control them. */
  public static final class Builder {
    private final List<RedisNode> nodes;
    private final EngineConfig config;
    private LongSupplier nanoClock = System::nanoTime;
    private LongSupplier wallMicros = () -> TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
    private ScheduledExecutorService scheduler;
    private Random jitter = new Random();
    private SecureRandom tokens = new SecureRandom();
    private boolean notices = true;
    private List<String> nodeIds;
    private int nodesPerResource;
    private List<String> oldIds;
    private List<String> newIds;
    private boolean recordMembership;
    private Duration heartbeat = MembershipRecords.HEARTBEAT;

    private Builder(List<RedisNode> nodes, EngineConfig config) {
      if (nodes.isEmpty()) {
        throw new IllegalArgumentException("at least one Redis node is needed");
      }
      this.nodes = nodes;
      this.config = Objects.requireNonNull(config);
    }

    public Builder nanoClock(LongSupplier clock) {
      this.nanoClock = clock;
      return this;
    }

    /** The wall clock in microseconds, used only to seed the fencing floor of (re)joining nodes. */
    public Builder wallMicros(LongSupplier clock) {
      this.wallMicros = clock;
      return this;
    }

    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = scheduler;
      return this;
    }

    public Builder jitter(Random random) {
      this.jitter = random;
      return this;
    }

    public Builder tokens(SecureRandom random) {
      this.tokens = random;
      return this;
    }

    /**
     * Whether releases are announced to the waiters of every server on the same nodes through
     * the nodes' pub/sub (default); off, a waiter on another server finds out at its next retry.
     */
    public Builder notices(boolean enabled) {
      this.notices = enabled;
      return this;
    }

    /**
     * The nodes' stable ids, one per node in the same order (default: each node's host:port).
     * Which nodes a key lives on follows from these, not from where a node stands in the list.
     */
    public Builder nodeIds(List<String> ids) {
      if (ids.size() != nodes.size() || ids.stream().distinct().count() != ids.size()) {
        throw new IllegalArgumentException("one distinct id per Redis node is needed, not " + ids.size()
            + " ids (" + ids.stream().distinct().count() + " distinct) for " + nodes.size() + " nodes");
      }
      this.nodeIds = List.copyOf(ids);
      return this;
    }

    /**
     * How many nodes each key lives on: odd, 1..N (or N itself); 0, the default, is N.
     * Refused with a one-line IllegalArgumentException otherwise.
     */
    public Builder nodesPerResource(int n) {
      if (oldIds == null) {
        LockEngine.nodesPerResource(nodes.size(), n);
      }
      this.nodesPerResource = n;
      return this;
    }

    /**
     * A membership change (--redis OLD --redis-next NEW): the nodes are both lists' (given by
     * {@link #nodeIds}), and each key lives on its set among {@code oldIds} and its set among
     * {@code newIds}, every grant and renewal needing a quorum of both. Each list's ids must be
     * distinct, and every node must be in one list at least. --nodes-per-resource must suit both.
     */
    public Builder membership(List<String> oldIds, List<String> newIds) {
      for (List<String> list : List.of(oldIds, newIds)) {
        if (list.isEmpty() || list.stream().distinct().count() != list.size()) {
          throw new IllegalArgumentException("each node list needs distinct ids and at least one node: " + list);
        }
      }
      this.oldIds = List.copyOf(oldIds);
      this.newIds = List.copyOf(newIds);
      return this;
    }

    /**
     * Whether this replica records on the nodes which node list(s) it runs, every
     * {@code heartbeat}, for {@link LockEngine#checkMembership} and the membership gauges (the
     * server does; off by default).
     */
    public Builder recordMembership(boolean enabled, Duration heartbeat) {
      this.recordMembership = enabled;
      this.heartbeat = heartbeat;
      return this;
    }

    public LockEngine build() {
      if (oldIds != null) {
        List<String> ids = nodeIds != null ? nodeIds : nodes.stream().map(RedisNode::name).toList();
        for (String id : ids) {
          if (!oldIds.contains(id) && !newIds.contains(id)) {
            throw new IllegalArgumentException("node '" + id + "' is in neither the old nor the new list");
          }
        }
      }
      return new LockEngine(this);
    }
  }
}
