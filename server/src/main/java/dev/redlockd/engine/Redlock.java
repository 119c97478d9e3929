package dev.redlockd.engine;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * One round of the Redlock algorithm per call, on the nodes of the key's set ({@link Placement}):
 * all of them at once (or a quorum first, thrifty), a quorum of the set's voting nodes,
 * validity = ttl - elapsed - drift, and clean-up on every node the round may have written.
 * No retries here; {@link AcquireOperation} schedules those.
 */
final class Redlock {
  private final List<RedisNode> nodes;
  private final Keys keys;
  private final EngineConfig config;
  private final LongSupplier nanoClock;
  private final NodeMonitor monitor;
  /** Judges the TIME in every granting or renewing reply: a node whose clock stepped does not vote. */
  private final ClockWatch clocks;
  /** Names this engine's acquire rounds: random per engine, so replicas never share a name. */
  private final String roundPrefix;
  private final AtomicLong rounds = new AtomicLong();
  /** Told how long each round waited for a quorum of answers: what admission control reads. */
  private final Backlog backlog;
  /** Which nodes each key lives on, and where a thrifty round asks first among them. */
  private final Placements placements;
  /** The validities this replica's thrifty rounds granted, which a renewal may restore a lease within. */
  private final RecentGrants recent;
  /** The wall clock in microseconds, and the last floor a thrifty acquire round sent ({@link #nextFloor}). */
  private final LongSupplier wallMicros;
  private final AtomicLong floors = new AtomicLong();

  Redlock(List<RedisNode> nodes, Keys keys, EngineConfig config, LongSupplier nanoClock, NodeMonitor monitor,
      long roundSeed) {
    this(nodes, keys, config, nanoClock, monitor, roundSeed, new Backlog(nanoClock), () -> 0);
  }

  Redlock(List<RedisNode> nodes, Keys keys, EngineConfig config, LongSupplier nanoClock, NodeMonitor monitor,
      long roundSeed, Backlog backlog) {
    this(nodes, keys, config, nanoClock, monitor, roundSeed, backlog, () -> 0);
  }

  Redlock(List<RedisNode> nodes, Keys keys, EngineConfig config, LongSupplier nanoClock, NodeMonitor monitor,
      long roundSeed, Backlog backlog, LongSupplier wallMicros) {
    this(nodes, keys, config, nanoClock, monitor, roundSeed, backlog, wallMicros,
        new Placements(nodes, nodes.stream().map(RedisNode::name).toList(), nodes.size()));
  }

  Redlock(List<RedisNode> nodes, Keys keys, EngineConfig config, LongSupplier nanoClock, NodeMonitor monitor,
      long roundSeed, Backlog backlog, LongSupplier wallMicros, Placements placements) {
    this.wallMicros = wallMicros;
    this.clocks = monitor.clocks();
    this.backlog = backlog;
    this.roundPrefix = Long.toUnsignedString(roundSeed, 36) + ".";
    this.nodes = nodes;
    this.keys = keys;
    this.config = config;
    this.nanoClock = nanoClock;
    this.monitor = monitor;
    this.placements = placements;
    this.recent = new RecentGrants(nanoClock);
  }

  /**
   * The floor of a thrifty acquire round's first fences (acquire.lua, acquire_permit.lua): this
   * replica's wall clock in microseconds, and above every floor it sent before, so that the nodes
   * of one round draw the same fence for a lease key none of them has a counter for.
   */
  private long nextFloor() {
    // Below 2^52 (the year 2112 in microseconds): acquire.lua adds 1 to fences as Lua numbers,
    // exact only below 2^53, and a wall clock set far ahead must not carry fences past that.
    long now = Math.min(wallMicros.getAsLong(), FLOOR_CEILING);
    return floors.updateAndGet(last -> Math.max(last + 1, now));
  }

  private static final long FLOOR_CEILING = 1L << 52;

  /** Names one release, unique across replicas, for the copies of its announcement to be told apart. */
  String newNotice() {
    return roundPrefix + "r" + Long.toString(rounds.incrementAndGet(), 36);
  }

  /** How many nodes of a key's set must say yes (every key's set is as large). */
  int quorum() {
    return placements.quorum();
  }

  /** How many nodes a key lives on. */
  int nodeCount() {
    return placements.perKey();
  }

  /**
   * Where the lease of permit {@code permit} (0: the lock) on {@code resource} lives: the set of
   * the resource's own key, so that the permits of one semaphore share a set, asked in the
   * lease's own order.
   */
  Placement placement(String resource, int permit) {
    return placements.of(keys.lease(resource, 0), keys.lease(resource, permit));
  }

  /**
   * One acquire round; fails with {@link LockHeldException} or {@link QuorumUnavailableException}.
   * {@code owner} is stored beside the lock (empty: none) and replaced by a refresh.
   */
  CompletableFuture<Grant> acquire(String resource, String token, String owner, Duration ttl) {
    return acquire(resource, token, owner, ttl, null);
  }

  /** {@link #acquire(String, String, String, Duration)}, telling {@code answered} (if not null) who answered. */
  CompletableFuture<Grant> acquire(String resource, String token, String owner, Duration ttl,
      Consumer<List<String>> answered) {
    long start = nanoClock.getAsLong();
    String round = roundPrefix + Long.toString(rounds.incrementAndGet(), 36);
    List<String> args = config.thriftyRounds()
        ? List.of(token, Long.toString(ttl.toMillis()), owner, round, Long.toString(nextFloor()))
        : List.of(token, Long.toString(ttl.toMillis()), owner, round);
    // Granted as soon as a quorum of voters took it: the others cannot undo that, and the
    // fencing token agreed over that quorum already exceeds every earlier grant's (each was
    // agreed over a quorum, which meets this one). A round that falls short waits for every
    // node, so that its clean-up knows which took the lock.
    ClockWatch.Round clock = clocks.round(start, "an acquire round");
    Placement placed = placement(resource, 0);
    NodeResult.Round<Replies.Acquire> acquiring = quorumRound(placed, Scripts.ACQUIRE,
        keys.forAcquire(resource), args,
        (node, reply) -> Replies.acquire(reply, clock, node), Replies.Acquire::votes, Replies.Acquire::holds);
    return acquiring.decided()
        .thenCompose(results -> {
          tellAnswered(answered, results);
          Tally tally = Tally.of(results, Replies.Acquire::votes, Replies.Acquire::holds, placed.quorum());
          if (!tally.quorumVoted()) {
            return cleanUpThenFail(resource, 0, token, round, results, QuorumUnavailableException.of(resource, tally));
          }
          if (!tally.quorumSaidYes()) {
            return cleanUpThenFail(resource, 0, token, round, results,
                new LockHeldException(resource, tally.yes(), tally.voters(), tally.silentCouldMakeAQuorum()));
          }
          return granted(resource, 0, token, ttl, start, round, placed, acquiring, results);
        });
  }

  /**
   * One acquire round for permit {@code permit} of the semaphore on {@code resource} with
   * {@code permits} permits: acquire.lua's round on the permit's own key (so the permit is a
   * lock, and quorum intersection holds per permit), with the semaphore's limit checked and kept
   * on every node in the same script call. Fails with {@link SemaphoreMismatchException} when a
   * voting node that answered guards another N, {@link PermitsHeldException} (which says what the
   * nodes hold) when refused, or {@link QuorumUnavailableException}. A node that answers after
   * the quorum that granted the permit is not waited for, as for a lock: a node holding a permit
   * granted under another N would have refused in the quorum (quorums meet), see
   * docs/guarantees.md.
   */
  CompletableFuture<Grant> acquirePermit(String resource, int permits, int permit, String token, String owner,
      Duration ttl) {
    return acquirePermit(resource, permits, permit, token, owner, ttl, null);
  }

  /** {@link #acquirePermit(String, int, int, String, String, Duration)}, telling {@code answered} who answered. */
  CompletableFuture<Grant> acquirePermit(String resource, int permits, int permit, String token, String owner,
      Duration ttl, Consumer<List<String>> answered) {
    long start = nanoClock.getAsLong();
    String round = roundPrefix + Long.toString(rounds.incrementAndGet(), 36);
    List<String> args = config.thriftyRounds()
        ? List.of(token, Long.toString(ttl.toMillis()), owner, round, Integer.toString(permits),
            Integer.toString(permit), Long.toString(nextFloor()))
        : List.of(token, Long.toString(ttl.toMillis()), owner, round, Integer.toString(permits),
            Integer.toString(permit));
    ClockWatch.Round clock = clocks.round(start, "a permit's acquire round");
    Placement placed = placement(resource, permit);
    NodeResult.Round<Replies.Acquire> acquiring = quorumRound(placed, Scripts.ACQUIRE_PERMIT,
        keys.forAcquirePermit(resource, permits, permit), args, (node, reply) -> Replies.acquirePermit(reply, clock,
            node), Replies.Acquire::votes, Replies.Acquire::holds);
    return acquiring.decided()
        .thenCompose(results -> {
          tellAnswered(answered, results);
          Tally tally = Tally.of(results, Replies.Acquire::votes, Replies.Acquire::holds, placed.quorum());
          for (NodeResult<Replies.Acquire> r : results) {
            if (r.answered() && r.value().votes() && r.value().mismatch()) {
              return cleanUpThenFail(resource, permit, token, round, results,
                  new SemaphoreMismatchException(resource, r.value().limit(), permits));
            }
          }
          if (!tally.quorumVoted()) {
            return cleanUpThenFail(resource, permit, token, round, results,
                QuorumUnavailableException.of(resource, tally));
          }
          if (!tally.quorumSaidYes()) {
            return cleanUpThenFail(resource, permit, token, round, results, refused(resource, permits, permit,
                tally, results));
          }
          return granted(resource, permit, token, ttl, start, round, placed, acquiring, results);
        });
  }

  /** Names the nodes that had answered, for an {@link AcquireObserver}; nothing is made without one. */
  private static void tellAnswered(Consumer<List<String>> answered, List<? extends NodeResult<?>> results) {
    if (answered == null) {
      return;
    }
    List<String> names = new ArrayList<>(results.size());
    for (NodeResult<?> r : results) {
      if (r.answered()) {
        names.add(r.node().name());
      }
    }
    answered.accept(names);
  }

  /** What a refused permit round saw: the permit this token holds, and where each permit is free. */
  private static PermitsHeldException refused(String resource, int permits, int tried, Tally tally,
      List<NodeResult<Replies.Acquire>> results) {
    int[] freeOn = new int[permits];
    int[] mineOn = new int[permits + 1];
    for (NodeResult<Replies.Acquire> r : results) {
      if (!r.answered() || !r.value().votes()) {
        continue;
      }
      Replies.Acquire a = r.value();
      if (a.mine() >= 1 && a.mine() <= permits) {
        mineOn[a.mine()]++;
      }
      for (int k = 1; k <= permits; k++) {
        if (a.free(k)) {
          freeOn[k - 1]++;
        }
      }
    }
    int mine = 0;
    for (int k = 1; k <= permits; k++) {
      if (mineOn[k] > mineOn[mine]) {
        mine = k;
      }
    }
    return new PermitsHeldException(resource, permits, tried, tally.yes(), tally.voters(),
        tally.silentCouldMakeAQuorum(), mine, freeOn);
  }

  /** A round a quorum of voters said yes to: the fence agreed over them, and the validity left. */
  private CompletableFuture<Grant> granted(String resource, int permit, String token, Duration ttl, long start,
      String round, Placement placed, NodeResult.Round<Replies.Acquire> acquiring,
      List<NodeResult<Replies.Acquire>> results) {
    Holders granted = holders(results, r -> r.votes() && r.holds(), Replies.Acquire::fence);
    return agreeOnFence(resource, permit, token, ttl, placed.quorum(), granted).thenCompose(fence -> {
      Duration validity = validity(ttl, start);
      if (fence < 0 || validity.isNegative() || validity.isZero()) {
        String why = fence < 0
            ? "resource '" + resource + "': the fencing token reached fewer than a quorum of "
                + nodeCount() + " Redis nodes"
            : "resource '" + resource + "': acquiring took longer than the ttl of " + ttl.toMillis() + "ms";
        return cleanUpThenFail(resource, permit, token, round, results, new QuorumUnavailableException(why));
      }
      monitor.sawFence(fence);
      settleLateHolders(resource, permit, token, fence, acquiring.all());
      takeBackFromSteppedClocks(resource, permit, token, round, acquiring.all());
      Grant grant = new Grant(resource, token, validity, fence, permit);
      remember(resource, permit, token, ttl, start, grant, null);
      return CompletableFuture.completedFuture(grant);
    });
  }

  /**
   * A node whose clock the round found stepped did not vote, but its script ran before anyone
   * knew: what it took in this round is taken back there, as a failed round takes back all it
   * wrote (a failed round's clean-up covers these nodes already). The grant does not rest on it.
   */
  private void takeBackFromSteppedClocks(String resource, int permit, String token, String round,
      CompletableFuture<List<NodeResult<Replies.Acquire>>> all) {
    all.thenAccept(results -> {
      for (NodeResult<Replies.Acquire> r : results) {
        if (r.answered() && r.value().stepped() && r.value().taken()) {
          r.node().eval(Scripts.ABANDON, keys.forLock(resource, permit), List.of(token, round));
        }
      }
    });
  }

  /**
   * Nodes that took the lock in a granted round but answered after its quorum may have drawn a
   * higher fence of their own: their stored fence is brought down to the grant's (settle.lua),
   * so that a renewal whose quorum includes them still reports the fence the holder was granted.
   * Best effort, after the grant: until it lands, a renewal that finds no quorum agreeing raises
   * to the highest, as after any fault.
   */
  private void settleLateHolders(String resource, int permit, String token, long fence,
      CompletableFuture<List<NodeResult<Replies.Acquire>>> all) {
    all.thenAccept(results -> {
      List<String> lock = List.of(keys.lease(resource, permit));
      List<String> args = List.of(token, Long.toString(fence));
      for (NodeResult<Replies.Acquire> r : results) {
        if (r.answered() && r.value().votes() && r.value().holds() && r.value().fence() > fence) {
          r.node().eval(Scripts.SETTLE, lock, args);
        }
      }
    });
  }

  /**
   * The voting nodes that hold the lease, with the fencing counter each reported: a round's
   * results, and per node its fence or {@link #NOT_HOLDING}. One array per round, not an object
   * per holder.
   */
  private record Holders(List<? extends NodeResult<?>> results, long[] fences) {}

  /** Below every fence a node reports, so never one the quorum fence counts. */
  private static final long NOT_HOLDING = Long.MIN_VALUE;

  private static <T> Holders holders(List<NodeResult<T>> results, Predicate<T> votesYes,
      java.util.function.ToLongFunction<T> fence) {
    long[] fences = new long[results.size()];
    for (int i = 0; i < fences.length; i++) {
      NodeResult<T> r = results.get(i);
      fences[i] = r.answered() && votesYes.test(r.value()) ? fence.applyAsLong(r.value()) : NOT_HOLDING;
    }
    return new Holders(results, fences);
  }

  /**
   * The fence of a grant or renewal. When a quorum of the holders already hold one fence, it is
   * that one, and nothing is raised: it exceeds every earlier grant's fence (that grant's quorum
   * meets this one, and each node in both drew above it), and every later grant's will exceed it
   * (this quorum's counters are at it or above). That is the usual case (the resource's counter
   * lives on every node), and the one that keeps a lease's fence as granted when a node that
   * answered the grant after its quorum drew a higher fence from its own floor: renewals then
   * still report the grant's fence, not a higher one that no new grant gave.
   *
   * <p>Otherwise the max over the holders is not monotonic by itself (nodes that missed grants
   * lag), so every holding node below the max is raised to it first, counter and fence-max
   * included: any later quorum then meets a node whose next fence for this resource is above
   * it. Completes with -1 when fewer than a quorum end at the max. A resource whose counters
   * ran out restarts from each node's own fence-max, and pays that one extra round trip.
   */
  private CompletableFuture<Long> agreeOnFence(String resource, int permit, String token, Duration ttl,
      Quorum quorum, Holders holders) {
    long[] fences = holders.fences();
    OptionalLong agreed = QuorumFence.of(fences, quorum);
    if (agreed.isPresent()) {
      return CompletableFuture.completedFuture(agreed.getAsLong());
    }
    long fence = Arrays.stream(fences).filter(f -> f != NOT_HOLDING).max().orElseThrow();
    List<RedisNode> lagging = new ArrayList<>();
    boolean[] atFence = new boolean[fences.length];
    for (int i = 0; i < fences.length; i++) {
      if (fences[i] != NOT_HOLDING) {
        if (fences[i] < fence) {
          lagging.add(holders.results().get(i).node());
        } else {
          atFence[i] = true;
        }
      }
    }
    if (lagging.isEmpty()) {
      return CompletableFuture.completedFuture(quorum.metBy(atFence) ? fence : -1L);
    }
    List<String> args = List.of(token, Long.toString(fence), Long.toString(ttl.toMillis()));
    List<String> raiseKeys = keys.forRaise(resource, permit);
    return NodeResult.fromAll(lagging,
            node -> node.eval(Scripts.RAISE, raiseKeys, args).thenApply(Replies::number))
        .thenApply(raised -> {
          for (NodeResult<Long> r : raised) {
            if (r.answered() && r.value() == 1L) {
              atFence[indexOf(holders.results(), r.node())] = true;
            }
          }
          return quorum.metBy(atFence) ? fence : -1L;
        });
  }

  private static int indexOf(List<? extends NodeResult<?>> results, RedisNode node) {
    for (int i = 0; i < results.size(); i++) {
      if (results.get(i).node() == node) {
        return i;
      }
    }
    throw new IllegalArgumentException("not a node of the round: " + node.name());
  }

  /**
   * A failed round takes back what it may have written: on the nodes that took the lock for it
   * and on those that did not answer. Nodes that merely refreshed an existing lease of this
   * token are left alone: that lease was granted by an earlier call, not by this round. The
   * failure is reported once the clean-up is answered or timed out; a clean-up that times out
   * may still run later, after a retry with the same token was granted on that node, so it
   * removes only this round's own write (abandon.lua), never the retry's.
   */
  private <T> CompletableFuture<T> cleanUpThenFail(String resource, int permit, String token, String round,
      List<NodeResult<Replies.Acquire>> results, RuntimeException failure) {
    List<RedisNode> written = new ArrayList<>();
    for (NodeResult<Replies.Acquire> r : results) {
      if (r.sent() && (!r.answered() || r.value().taken())) {
        written.add(r.node());
      }
    }
    if (written.isEmpty()) {
      return CompletableFuture.failedFuture(failure);
    }
    List<String> args = List.of(token, round);
    List<String> abandonKeys = keys.forLock(resource, permit);
    return NodeResult.fromAll(written, node -> node.eval(Scripts.ABANDON, abandonKeys, args))
        .handle((ignored, e) -> null)
        .thenCompose(ignored -> CompletableFuture.failedFuture(failure));
  }

  /** One lease for {@link #extendAll}: renew it for {@code ttl} from now. Permit 0 is a lock. */
  record Extension(String resource, String token, Duration ttl, int permit) {
    Extension(String resource, String token, Duration ttl) {
      this(resource, token, ttl, 0);
    }
  }

  /**
   * Leases due together are renewed by one script call per node (up to this many per call);
   * one call per lease per node cost the Redis nodes most of a core at 10,000 kept leases.
   * Small enough that one call's Lua run stays well under a millisecond.
   */
  static final int EXTEND_CHUNK = 128;

  CompletableFuture<Grant> extend(String resource, String token, Duration ttl) {
    return extendAll(List.of(new Extension(resource, token, ttl))).get(0);
  }

  CompletableFuture<Grant> extend(String resource, int permit, String token, Duration ttl) {
    return extendAll(List.of(new Extension(resource, token, ttl, permit))).get(0);
  }

  /**
   * Compare-and-pexpire on every node, for each lease; one future per lease, in order. Not
   * held by a quorum is {@link LeaseNotHeldException} only when the silent nodes could not
   * make up a quorum; otherwise the outcome is unknown ({@link QuorumUnavailableException})
   * and the holder should keep trying within its validity. The fencing token is agreed over
   * the holding nodes as in acquire: a node that took the lock in the granting round but
   * answered too late may report a higher counter, which is then raised on the others before
   * it is returned (so it never exceeds what a later grant sees).
   */
  List<CompletableFuture<Grant>> extendAll(List<Extension> extensions) {
    List<CompletableFuture<Grant>> leases = new ArrayList<>(extensions.size());
    // Locks and permits live in separate spaces, so one space's extensions are all of one kind.
    for (int from = 0; from < extensions.size(); from += EXTEND_CHUNK) {
      leases.addAll(extendChunk(extensions.subList(from, Math.min(extensions.size(), from + EXTEND_CHUNK))));
    }
    return leases;
  }

  /**
   * One chunk's renewals. Each lease is renewed on its own set: every node of it, or (thrifty)
   * the first quorum of its order, widening alone. The first asks are sent as one many-lease
   * extend per node, each carrying the leases that node is asked about first; a widening is a
   * call of its own.
   */
  private List<CompletableFuture<Grant>> extendChunk(List<Extension> chunk) {
    boolean permits = chunk.get(0).permit() != 0;
    if (chunk.stream().anyMatch(e -> (e.permit() != 0) != permits)) {
      throw new IllegalArgumentException("locks and permits are extended in separate calls");
    }
    boolean thrifty = config.thriftyRounds();
    long start = nanoClock.getAsLong();
    ClockWatch.Round clock = clocks.round(start, "a renewal round");
    Placement[] placed = new Placement[chunk.size()];
    int[][] orders = new int[chunk.size()][];
    // Per lease, per node of its set: where the lease stands in that node's many-lease call, or -1.
    int[][] slots = new int[chunk.size()][];
    List<List<Extension>> firstOn = new ArrayList<>(nodes.size());
    for (int n = 0; n < nodes.size(); n++) {
      firstOn.add(new ArrayList<>());
    }
    for (int i = 0; i < chunk.size(); i++) {
      Extension e = chunk.get(i);
      placed[i] = placement(e.resource(), e.permit());
      List<RedisNode> set = placed[i].nodes();
      orders[i] = thrifty ? order(placed[i]) : placed[i].ranked();
      slots[i] = new int[set.size()];
      Arrays.fill(slots[i], -1);
      int[] first = thrifty ? placed[i].quorum().firstAsks(orders[i]) : orders[i];
      for (int local : first) {
        List<Extension> mine = firstOn.get(nodes.indexOf(set.get(local)));
        slots[i][local] = mine.size();
        mine.add(e);
      }
    }
    Backlog.Round timed = thrifty ? null : backlog.round(quorum());
    List<CompletableFuture<List<Replies.Extend>>> batches = new ArrayList<>(nodes.size());
    ExtendCall whole = null; // made once for every node that carries the whole chunk (each, when sets are all nodes)
    for (int n = 0; n < nodes.size(); n++) {
      List<Extension> mine = firstOn.get(n);
      ExtendCall call = null;
      if (mine.size() == chunk.size()) {
        whole = whole != null ? whole : extendCall(chunk);
        call = whole;
      } else if (!mine.isEmpty()) {
        call = extendCall(mine);
      }
      CompletableFuture<List<Replies.Extend>> batch = call == null ? null : call.on(nodes.get(n), clock);
      if (batch != null && timed != null) {
        batch.whenComplete((reply, failure) -> timed.ended());
      }
      batches.add(batch);
    }
    List<CompletableFuture<Grant>> leases = new ArrayList<>(chunk.size());
    for (int i = 0; i < chunk.size(); i++) {
      Extension e = chunk.get(i);
      Placement place = placed[i];
      List<RedisNode> set = place.nodes();
      int[] slot = slots[i];
      Function<RedisNode, CompletableFuture<Replies.Extend>> ask = node -> {
        int at = slot[set.indexOf(node)];
        return at >= 0 ? batches.get(nodes.indexOf(node)).thenApply(each -> each.get(at))
            : extendCall(List.of(e)).on(node, clock).thenApply(each -> each.get(0));
      };
      leases.add(thrifty ? extendThrifty(e, start, clock, placed[i], orders[i], ask)
          : NodeResult.fromAll(set, ask).thenCompose(results -> {
            monitor.observe(results, Replies.Extend::votes);
            return movedThenExtended(e, start, clock, place, results);
          }));
    }
    return leases;
  }

  /** One many-lease extend, made once and sent to any number of nodes. */
  private record ExtendCall(LuaScript script, List<String> keys, List<String> args, int leases) {
    /** Sent to {@code node}: each lease's reply, in order. */
    CompletableFuture<List<Replies.Extend>> on(RedisNode node, ClockWatch.Round clock) {
      try {
        return node.eval(script, keys, args).thenApply(reply -> Replies.extend(reply, leases, clock, node));
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e); // as a node that failed to answer
      }
    }
  }

  /** The many-lease extend of {@code leases}, all locks or all permits. */
  private ExtendCall extendCall(List<Extension> leases) {
    boolean permits = leases.get(0).permit() != 0;
    // A permit's renewal pushes its semaphore's limit key out with it (extend_permits.lua).
    LuaScript script = permits ? Scripts.EXTEND_PERMITS : Scripts.EXTEND;
    List<String> keyList = permits
        ? keys.forExtendPermits(leases.stream().map(Extension::resource).toList(),
            leases.stream().map(Extension::permit).toList())
        : keys.forExtend(leases.stream().map(Extension::resource).toList());
    List<String> args = new ArrayList<>(2 * leases.size());
    for (Extension e : leases) {
      args.add(e.token());
      args.add(Long.toString(e.ttl().toMillis()));
    }
    return new ExtendCall(script, keyList, args, leases.size());
  }

  /** One lease's thrifty renewal: on a quorum of nodes in its order, widening as an acquire round does. */
  private CompletableFuture<Grant> extendThrifty(Extension e, long start, ClockWatch.Round clock, Placement placed,
      int[] order, Function<RedisNode, CompletableFuture<Replies.Extend>> ask) {
    NodeResult.Round<Replies.Extend> round = NodeResult.widening(placed.nodes(), order, placed.quorum(), ask,
        (node, reply) -> reply, r -> r.votes() && r.held(), backlog.round(placed.quorum().smallest()));
    round.all().thenAccept(results -> monitor.observe(results, Replies.Extend::votes));
    String lease = keys.lease(e.resource(), e.permit());
    return round.decided().thenCompose(results -> {
      RecentGrants.Held held = recent.of(lease, e.token());
      if (Tally.of(results, Replies.Extend::votes, Replies.Extend::held, placed.quorum()).quorumSaidYes()
          || !mayRestore(e, held, results)) {
        return movedThenExtended(e, start, clock, placed, results);
      }
      return restore(e, held, start, clock, placed.quorum(), results).thenCompose(
          restored -> restored != null ? CompletableFuture.completedFuture(restored)
              : extended(e, start, placed.quorum(), results));
    }).whenComplete((grant, failure) -> remember(e.resource(), e.permit(), e.token(), e.ttl(), start, grant,
        failure));
  }

  /**
   * Keeps {@link #recent} up to date with a thrifty round's outcome (begun at {@code start});
   * nothing is kept with every-node rounds. The validity ends where {@link #validity} counts it to.
   */
  private void remember(String resource, int permit, String token, Duration ttl, long start, Grant grant,
      Throwable failure) {
    if (!config.thriftyRounds()) {
      return;
    }
    if (grant != null) {
      recent.granted(keys.lease(resource, permit), token, grant.fencingToken(), ttl.toMillis(),
          start + ttl.toNanos() - config.driftNanos(ttl));
    } else if (unwrap(failure) instanceof LeaseNotHeldException) {
      recent.ended(keys.lease(resource, permit), token);
    }
  }

  private static Throwable unwrap(Throwable failure) {
    return failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
        ? failure.getCause() : failure;
  }

  /**
   * Whether a renewal that fell short may put a lock back on nodes that do not hold it: only
   * while its last validity runs (its holder holds a quorum till then, so no one else can have
   * been granted it since), and only at the fence its holder was told, which every node still
   * holding it must report (a lease whose fence is being raised is renewed as usual).
   */
  private static boolean mayRestore(Extension e, RecentGrants.Held held, List<NodeResult<Replies.Extend>> results) {
    if (e.permit() != 0 || held == null || held.fence() <= 0) {
      return false;
    }
    for (NodeResult<Replies.Extend> r : results) {
      if (r.answered() && r.value().held() && r.value().fence() != held.fence()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Puts the lock back (restore.lua) on the voting nodes that answered without holding it, at
   * once. Completes with the renewal when those that hold it now make a quorum and every answer
   * counted came before the lease's last validity ran out; else with null (the renewal then
   * fails as any other that fell short: JEOPARDY for a kept lease, until its validity runs out).
   */
  private CompletableFuture<Grant> restore(Extension e, RecentGrants.Held lease, long start, ClockWatch.Round clock,
      Quorum quorum, List<NodeResult<Replies.Extend>> results) {
    List<RedisNode> free = new ArrayList<>();
    boolean[] holding = new boolean[results.size()];
    boolean[] couldHold = new boolean[results.size()];
    for (int i = 0; i < results.size(); i++) {
      NodeResult<Replies.Extend> r = results.get(i);
      if (r.answered() && r.value().votes()) {
        couldHold[i] = true;
        if (r.value().held()) {
          holding[i] = true;
        } else {
          free.add(r.node());
        }
      }
    }
    if (!quorum.metBy(couldHold)) {
      return CompletableFuture.completedFuture(null);
    }
    return putOn(free, e, lease.fence(), clock, results, holding).thenApply(held -> {
      Duration validity = validity(e.ttl(), start);
      if (!quorum.metBy(held) || nanoClock.getAsLong() - lease.untilNanos() >= 0 || validity.isNegative()
          || validity.isZero()) {
        return null;
      }
      return new Grant(e.resource(), e.token(), validity, lease.fence(), 0);
    });
  }

  /**
   * Writes the lease at {@code fence} (restore.lua: only where it is free and the node's counter
   * is not above the fence) on {@code free}, nodes of {@code results}; completes with
   * {@code holding} (per node of the results) marked where it was put, by a voting node.
   */
  private CompletableFuture<boolean[]> putOn(List<RedisNode> free, Extension e, long fence, ClockWatch.Round clock,
      List<NodeResult<Replies.Extend>> results, boolean[] holding) {
    List<String> restoreKeys = keys.forRestore(e.resource(), e.permit());
    List<String> args = List.of(e.token(), Long.toString(fence), Long.toString(e.ttl().toMillis()));
    return NodeResult.fromAll(free, node -> node.eval(Scripts.RESTORE, restoreKeys, args)
            .thenApply(reply -> Replies.restore(reply, clock, node)))
        .thenApply(restored -> {
          boolean[] held = holding.clone();
          for (NodeResult<Replies.Restore> r : restored) {
            if (r.answered() && r.value().votes() && r.value().put()) {
              held[indexOf(results, r.node())] = true;
            }
          }
          return held;
        });
  }

  /**
   * A renewal during a membership change: the lease may have been granted under the old list
   * alone, and live on no quorum of its new set yet. While a quorum of its old set holds it
   * (renewed by this round, so valid: no other lease of the resource can have a quorum of that
   * set), it is written at the fence that quorum agrees on to the nodes of its new set that
   * answered without it, and then counted over both sets. This is how kept leases and
   * leaderships move onto their new sets before the old list is dropped. Outside a change, or
   * when no new-set node lacks it, a renewal as ever.
   */
  private CompletableFuture<Grant> movedThenExtended(Extension e, long start, ClockWatch.Round clock,
      Placement placed, List<NodeResult<Replies.Extend>> results) {
    Quorum quorum = placed.quorum();
    if (!quorum.joint()) {
      return extended(e, start, quorum, results);
    }
    List<RedisNode> lacking = new ArrayList<>();
    boolean[] holding = new boolean[results.size()];
    long[] fences = new long[results.size()];
    for (int i = 0; i < results.size(); i++) {
      NodeResult<Replies.Extend> r = results.get(i);
      if (r.answered() && r.value().votes()) {
        if (r.value().held()) {
          holding[i] = true;
          fences[i] = r.value().fence();
        } else if (quorum.inSet(1, i)) {
          lacking.add(r.node());
        }
      }
    }
    Quorum old = quorum.only(0);
    OptionalLong fence = QuorumFence.of(fences, old);
    if (lacking.isEmpty() || !old.metBy(holding) || fence.isEmpty()) {
      return extended(e, start, quorum, results);
    }
    return putOn(lacking, e, fence.getAsLong(), clock, results, holding).thenCompose(held -> {
      List<NodeResult<Replies.Extend>> moved = new ArrayList<>(results);
      for (int i = 0; i < held.length; i++) {
        if (held[i] && !holding[i]) {
          moved.set(i, new NodeResult<>(results.get(i).node(), new Replies.Extend(true, fence.getAsLong(), true, NodeClock.Verdict.VOTES), null));
        }
      }
      return extended(e, start, quorum, moved);
    });
  }

  private CompletableFuture<Grant> extended(Extension e, long start, Quorum quorum,
      List<NodeResult<Replies.Extend>> results) {
    String resource = e.resource();
    Tally tally = Tally.of(results, Replies.Extend::votes, Replies.Extend::held, quorum);
    if (!tally.quorumVoted() || (!tally.quorumSaidYes() && tally.silentCouldMakeAQuorum())) {
      return CompletableFuture.failedFuture(QuorumUnavailableException.of(resource, tally));
    }
    if (!tally.quorumSaidYes()) {
      return CompletableFuture.failedFuture(new LeaseNotHeldException(resource, tally.yes(), tally.quorum()));
    }
    Holders holding = holders(results, r -> r.votes() && r.held(), Replies.Extend::fence);
    return agreeOnFence(resource, e.permit(), e.token(), e.ttl(), quorum, holding).thenApply(fence -> {
      if (fence < 0) {
        throw new QuorumUnavailableException("resource '" + resource
            + "': the fencing token reached fewer than a quorum of " + nodeCount() + " Redis nodes");
      }
      Duration validity = validity(e.ttl(), start);
      if (validity.isNegative() || validity.isZero()) {
        throw new QuorumUnavailableException("resource '" + resource
            + "': extending took longer than the ttl of " + e.ttl().toMillis() + "ms");
      }
      return new Grant(resource, e.token(), validity, fence, e.permit());
    });
  }

  /**
   * Compare-and-delete on every node; the tally's yes counts voting nodes that deleted it.
   * Each node that deletes it announces {@code notice} (see {@link #newNotice()}) to waiters.
   * Complete as soon as a quorum deleted it (the lease is gone then, whatever the others say;
   * their deletes are on the way), else once every node answered or timed out.
   */
  CompletableFuture<Tally> release(String resource, String token, String notice) {
    return release(resource, 0, token, notice);
  }

  /**
   * {@link #release(String, String, String)} for a lease that may be a permit: a permit's
   * release is announced on its semaphore's channel, so that it wakes waiters for any permit.
   */
  CompletableFuture<Tally> release(String resource, int permit, String token, String notice) {
    if (config.thriftyRounds()) {
      recent.ended(keys.lease(resource, permit), token);
    }
    List<String> args = List.of(token, keys.releasedChannel(resource), notice);
    Placement placed = placement(resource, permit);
    return untilAQuorumSaysYes(placed, Scripts.RELEASE, keys.forLock(resource, permit), args,
            (node, reply) -> Replies.release(reply), Replies.Release::incarnated, Replies.Release::deleted)
        .thenApply(results -> Tally.of(results, Replies.Release::incarnated, Replies.Release::deleted,
            placed.quorum()));
  }

  /**
   * Runs the script on every node; completes with the answers in so far once a quorum of
   * voters said yes, else with every answer. The node monitor sees every answer either way.
   */
  private <T> CompletableFuture<List<NodeResult<T>>> untilAQuorumSaysYes(Placement lease, LuaScript script,
      List<String> keyList, List<String> args, BiFunction<RedisNode, Object, T> reply, Predicate<T> incarnated,
      Predicate<T> yes) {
    return quorumRound(lease, script, keyList, args, reply, incarnated, yes).decided();
  }

  /**
   * {@link #untilAQuorumSaysYes}'s round, whose every answer is there too once the slowest came
   * in. It goes to the lease's set only: thrifty, it asks a quorum of the set in the lease's
   * preference order and widens from there to the set's next nodes (never outside the set);
   * else every node of the set at once.
   */
  private <T> NodeResult.Round<T> quorumRound(Placement lease, LuaScript script, List<String> keyList,
      List<String> args, BiFunction<RedisNode, Object, T> reply, Predicate<T> votes, Predicate<T> yes) {
    NodeResult.Round<T> round = config.thriftyRounds()
        ? NodeResult.widening(lease.nodes(), order(lease), lease.quorum(), node -> node.eval(script, keyList, args),
            reply, r -> votes.test(r) && yes.test(r), backlog.round(lease.quorum().smallest()))
        : NodeResult.untilEnough(lease.nodes(), node -> node.eval(script, keyList, args), reply,
            sofar -> Tally.of(sofar, votes, yes, lease.quorum()).quorumSaidYes(), backlog.round(quorum()));
    round.all().thenAccept(results -> monitor.observe(results, votes));
    return round;
  }

  /**
   * The nodes of the lease's set (indexes into {@link Placement#nodes()}) in the order a thrifty
   * round asks them: its preference order, with the nodes the monitor does not know UP (down,
   * quarantined, not yet probed) moved to the end, so that a known fault does not cost every
   * round a node timeout.
   */
  int[] order(Placement lease) {
    int[] ranked = lease.ranked();
    List<RedisNode> set = lease.nodes();
    int[] order = new int[ranked.length];
    int at = 0;
    for (int i : ranked) {
      if (monitor.up(set.get(i))) {
        order[at++] = i;
      }
    }
    for (int i : ranked) {
      if (!monitor.up(set.get(i))) {
        order[at++] = i;
      }
    }
    return order;
  }

  private Duration validity(Duration ttl, long startNanos) {
    long elapsed = nanoClock.getAsLong() - startNanos;
    return Duration.ofNanos(ttl.toNanos() - elapsed - config.driftNanos(ttl));
  }
}
