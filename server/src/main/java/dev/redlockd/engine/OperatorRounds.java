package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The operator's rounds on one resource, outside the Redlock algorithm proper: a read of who
 * holds it, and a delete whatever the token. Both go to every node of the resource's set at
 * once (a semaphore's permits share the set of its name), whichever of them a lease was written to.
 */
final class OperatorRounds {
  private final Keys keys;
  private final NodeMonitor monitor;
  private final Placements placements;

  /** Every resource on every node. */
  OperatorRounds(List<RedisNode> nodes, Keys keys, NodeMonitor monitor) {
    this(keys, monitor, new Placements(nodes, nodes.stream().map(RedisNode::name).toList(), nodes.size()));
  }

  OperatorRounds(Keys keys, NodeMonitor monitor, Placements placements) {
    this.keys = keys;
    this.monitor = monitor;
    this.placements = placements;
  }

  /** Where {@code resource}'s leases live (as {@link Redlock#placement}): both sets, during a membership change. */
  private Placement placement(String resource) {
    return placements.of(keys.lease(resource, 0));
  }

  /**
   * Reads every node and reports the lease a quorum of voting nodes hold. When no lease has a
   * quorum and the silent nodes could give one a quorum, nobody can tell:
   * {@link QuorumUnavailableException}.
   */
  CompletableFuture<LockDescription> describe(String resource) {
    Placement placed = placement(resource);
    return NodeResult.fromAll(placed.nodes(),
            node -> node.eval(Scripts.DESCRIBE, keys.forLock(resource), List.of()).thenApply(Replies::described))
        .thenApply(results -> {
          monitor.observe(results, Replies.Described::incarnated);
          return describe(resource, results, placed.quorum());
        });
  }

  /**
   * Reads the semaphore on the resource: first its N from the limit key on every node of its
   * set (the largest any node holds: a permit may be held under it), then every permit 1..N on
   * every node of the set in one script call each, each permit then judged as
   * {@link #describe(String)} judges a lock.
   */
  CompletableFuture<SemaphoreDescription> describePermits(String resource) {
    String limitKey = keys.limit(resource);
    Placement placed = placement(resource);
    List<RedisNode> nodes = placed.nodes();
    return NodeResult.fromAll(nodes, node -> node.command("GET", limitKey))
        .thenCompose(limits -> {
          int permits = 0;
          for (NodeResult<Object> r : limits) {
            if (r.answered() && r.value() != null) {
              permits = Math.max(permits, (int) Math.min(RequestRules.MAX_PERMITS, Replies.number(r.value())));
            }
          }
          if (permits == 0) {
            return CompletableFuture.completedFuture(SemaphoreDescription.NONE);
          }
          int n = permits;
          return NodeResult.fromAll(nodes,
                  node -> node.eval(Scripts.DESCRIBE_PERMITS, keys.forDescribePermits(resource, n), List.of())
                      .thenApply(reply -> Replies.describedPermits(reply, n)))
              .thenApply(results -> {
                monitor.observe(results, Replies.DescribedPermits::incarnated);
                return describePermits(resource, n, results, placed.quorum());
              });
        });
  }

  static SemaphoreDescription describePermits(String resource, int permits,
      List<NodeResult<Replies.DescribedPermits>> results) {
    return describePermits(resource, permits, results, Quorum.majority(results.size()));
  }

  static SemaphoreDescription describePermits(String resource, int permits,
      List<NodeResult<Replies.DescribedPermits>> results, Quorum quorum) {
    List<SemaphoreDescription.PermitDescription> held = new java.util.ArrayList<>();
    for (int k = 1; k <= permits; k++) {
      int index = k - 1;
      List<NodeResult<Replies.Described>> each = results.stream()
          .map(r -> new NodeResult<>(r.node(), r.answered() ? r.value().permits().get(index) : null, r.failure()))
          .toList();
      LockDescription lease = describe(resource, each, quorum);
      if (lease.held()) {
        held.add(new SemaphoreDescription.PermitDescription(k, lease));
      }
    }
    return new SemaphoreDescription(permits, held);
  }

  static LockDescription describe(String resource, List<NodeResult<Replies.Described>> results) {
    return describe(resource, results, Quorum.majority(results.size()));
  }

  /** What {@code results}, per node of a placement whose quorum is {@code quorum}, say of the lease. */
  static LockDescription describe(String resource, List<NodeResult<Replies.Described>> results, Quorum quorum) {
    // Only one lease can have a quorum; the one most voting nodes hold is the only candidate.
    String leading = results.stream()
        .filter(r -> r.answered() && r.value().incarnated() && r.value().holds())
        .collect(Collectors.groupingBy(r -> r.value().holder(), Collectors.counting()))
        .entrySet().stream()
        .max(Map.Entry.comparingByValue())
        .map(Map.Entry::getKey)
        .orElse("");
    Tally tally = Tally.of(results, Replies.Described::incarnated,
        d -> d.holds() && d.holder().equals(leading), quorum);
    if (!tally.quorumSaidYes()) {
      if (!tally.quorumVoted() || tally.silentCouldMakeAQuorum()) {
        throw QuorumUnavailableException.of(resource, tally);
      }
      return LockDescription.NOT_HELD;
    }
    List<NodeResult<Replies.Described>> holding = results.stream()
        .filter(r -> r.answered() && r.value().holds() && r.value().holder().equals(leading))
        .toList();
    List<Replies.Described> voting = holding.stream()
        .map(NodeResult::value)
        .filter(Replies.Described::incarnated)
        .toList();
    long[] pttls = new long[results.size()];
    long[] fences = new long[results.size()];
    for (int i = 0; i < results.size(); i++) {
      NodeResult<Replies.Described> r = results.get(i);
      boolean votes = r.answered() && r.value().incarnated() && r.value().holds() && r.value().holder().equals(leading);
      pttls[i] = votes ? r.value().pttlMillis() : Long.MIN_VALUE;
      fences[i] = votes ? r.value().fence() : 0;
    }
    long remaining = remaining(pttls, quorum);
    // The fence an Extend would report: the one a quorum of them agree on, else the highest.
    long fence = QuorumFence.of(fences, quorum)
        .orElseGet(() -> voting.stream().mapToLong(Replies.Described::fence).max().orElseThrow());
    OwnerText.Parsed stored = OwnerText.parse(mostCommon(voting, Replies.Described::owner));
    return new LockDescription(true, stored.owner(), stored.holder(),
        Duration.ofMillis(Math.max(0, remaining)), fence,
        holding.stream().map(r -> r.node().name()).toList());
  }

  /**
   * After how many milliseconds fewer than a quorum still hold the lease, given each node's time
   * left ({@code Long.MIN_VALUE}: not holding): per set, the time left of its quorum's last node,
   * and the soonest of the sets.
   */
  private static long remaining(long[] pttls, Quorum quorum) {
    long soonest = Long.MAX_VALUE;
    for (int s = 0; s < quorum.setCount(); s++) {
      int set = s;
      long[] inSet = java.util.stream.IntStream.range(0, pttls.length).filter(i -> quorum.inSet(set, i))
          .mapToLong(i -> pttls[i]).sorted().toArray();
      soonest = Math.min(soonest, inSet[inSet.length - quorum.need(s)]);
    }
    return soonest;
  }

  /** Nodes that a refresh with a new owner text reached only in part disagree: most of them win. */
  private static <T> String mostCommon(List<T> values, Function<T, String> field) {
    return values.stream()
        .collect(Collectors.groupingBy(field, Collectors.counting()))
        .entrySet().stream()
        .max(Map.Entry.comparingByValue())
        .map(Map.Entry::getKey)
        .orElse("");
  }

  /**
   * Deletes the lock key and owner text on every node of its set, whatever the token. The tally counts
   * every node that answered as a voter (a quarantined node's key is deleted too) and its yes
   * votes are the nodes that held a lock key.
   */
  CompletableFuture<Tally> forceRelease(String resource) {
    return forceRelease(resource, 0);
  }

  /** {@link #forceRelease(String)} of a permit (1..N) of the semaphore on the resource; 0 is the lock. */
  CompletableFuture<Tally> forceRelease(String resource, int permit) {
    return NodeResult.fromAll(placement(resource).nodes(),
            node -> node.eval(Scripts.FORCE_RELEASE, keys.forLock(resource, permit), List.of())
                .thenApply(Replies::forceReleased))
        .thenApply(results -> {
          monitor.observe(results, Replies.ForceReleased::incarnated);
          return Tally.of(results, r -> true, Replies.ForceReleased::deleted);
        });
  }
}
