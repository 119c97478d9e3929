package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
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
  private final Redlock redlock;
  private final OperatorRounds operator;
  private final NodeMonitor monitor;
  private final Waiters waiters = new Waiters();
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final RenewalBatch renewals;
  private final LongSupplier nanoClock;
  private final Random jitter;
  private final SecureRandom tokens;
  private final AtomicInteger waitingCalls = new AtomicInteger();

  private LockEngine(Builder b) {
    this.nodes = List.copyOf(b.nodes);
    this.config = b.config;
    this.rules = new RequestRules(config);
    this.nanoClock = b.nanoClock;
    this.jitter = b.jitter;
    this.tokens = b.tokens;
    this.ownsScheduler = b.scheduler == null;
    this.scheduler = ownsScheduler ? defaultScheduler() : b.scheduler;
    this.renewals = new RenewalBatch(this, scheduler, nanoClock);
    Keys keys = new Keys(config.keyPrefix());
    this.monitor = new NodeMonitor(nodes, keys, config, scheduler, b.wallMicros, nanoClock, tokens);
    this.redlock = new Redlock(nodes, keys, config, nanoClock, monitor, tokens.nextLong());
    this.operator = new OperatorRounds(nodes, keys, monitor);
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
   * An empty {@code token} makes the engine choose one. Cancel the future to give up: a
   * lease granted in the meantime is released when the engine chose its token; with the
   * caller's token it is left to the caller (who may be retrying with it) and runs out at its ttl.
   */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token) {
    return acquire(resource, ttl, wait, token, "");
  }

  /**
   * As {@link #acquire(String, Duration, Duration, String)}, storing {@code owner} (free text,
   * at most 256 UTF-8 bytes) with the lock for {@link #describe}; a refresh with the same token
   * replaces it.
   */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token, String owner) {
    try {
      rules.resource(resource);
      rules.ttl(resource, ttl);
      rules.waitTime(resource, Objects.requireNonNull(wait, "wait"));
      rules.token(resource, token, false);
      rules.owner(resource, Objects.requireNonNull(owner, "owner"));
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    String leaseToken = token.isEmpty() ? LockToken.generate(tokens) : token;
    boolean waits = !wait.isZero();
    AcquireOperation operation = new AcquireOperation(redlock, waiters, scheduler, nanoClock, jitter,
        config.retryDelay(), resource, leaseToken, !token.isEmpty(), owner, ttl, wait);
    if (waits && waitingCalls.incrementAndGet() > config.maxWaitingAcquires()) {
      waitingCalls.decrementAndGet();
      return CompletableFuture.failedFuture(new LimitExceededException("resource '" + resource
          + "': " + config.maxWaitingAcquires() + " Acquire calls are already waiting on this server"));
    }
    CompletableFuture<Grant> result = operation.start();
    if (waits) {
      result.whenComplete((lease, failure) -> waitingCalls.decrementAndGet());
    }
    return result;
  }

  /** Renews a held lease for {@code ttl} from now; {@link LeaseNotHeldException} if it is not held. */
  public CompletableFuture<Grant> extend(String resource, String token, Duration ttl) {
    try {
      rules.resource(resource);
      rules.token(resource, token, true);
      rules.ttl(resource, ttl);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    return redlock.extend(resource, token, ttl);
  }

  /** Kept leases due together; their resources, tokens and ttls were checked when they were kept. */
  List<CompletableFuture<Grant>> extendAll(List<Redlock.Extension> extensions) {
    return redlock.extendAll(extensions);
  }

  /**
   * Releases on every node; true when a quorum still held the lease, false when it was no
   * longer held. When nodes that did not answer could make the difference, the outcome is
   * unknown: {@link QuorumUnavailableException}, and the call may be retried.
   */
  public CompletableFuture<Boolean> release(String resource, String token) {
    try {
      rules.resource(resource);
      rules.token(resource, token, true);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    return redlock.release(resource, token).thenApply(tally -> {
      if (tally.yes() > 0) {
        waiters.wakeNext(resource);
      }
      if (tally.quorumSaidYes()) {
        return true;
      }
      if (!tally.quorumVoted() || Redlock.silentCouldMakeAQuorum(tally)) {
        throw QuorumUnavailableException.of(resource, tally);
      }
      return false;
    });
  }

  /**
   * Who holds the resource, read from every node at once: a snapshot, not a linearizable read
   * (the lock may change hands while it is read). Nodes that do not answer within the node
   * timeout are left out; when they could make the difference, {@link QuorumUnavailableException}.
   */
  public CompletableFuture<LockDescription> describe(String resource) {
    try {
      rules.resource(resource);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    return operator.describe(resource);
  }

  /**
   * Deletes the resource's lock on every node whatever its token, for an operator whose holder
   * is gone. True when some node that answered held a lock key. Fencing counters are left alone,
   * so the next grant's fencing token is still above the deleted lease's. Fewer than a quorum
   * answering is {@link QuorumUnavailableException}: the lock may still be held.
   */
  public CompletableFuture<Boolean> forceRelease(String resource) {
    try {
      rules.resource(resource);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    return operator.forceRelease(resource).thenApply(tally -> {
      if (tally.yes() > 0) {
        waiters.wakeNext(resource);
      }
      if (!tally.quorumVoted()) {
        throw QuorumUnavailableException.of(resource, tally);
      }
      return tally.yes() > 0;
    });
  }

  /**
   * A lease to keep alive for its holder; nothing is sent until {@link KeptLease#renewNow}.
   * The first renewal checks that the lease is held.
   */
  public KeptLease keep(String resource, String token, Duration ttl, KeptLease.Listener listener) {
    rules.resource(resource);
    rules.token(resource, token, true);
    rules.ttl(resource, ttl);
    return new KeptLease(this, scheduler, renewals, nanoClock, resource, token, ttl, listener);
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

  /** How many nodes must vote yes: N/2+1. */
  public int quorum() {
    return Tally.quorumOf(nodes.size());
  }

  /** Acquire calls with a wait under way now: the count {@code maxWaitingAcquires} limits. */
  public int waitingAcquires() {
    return waitingCalls.get();
  }

  /** Whether a quorum of nodes voted at the last probe. */
  public boolean quorumAvailable() {
    return monitor.quorumUp();
  }

  /** Called with the new value each time {@link #quorumAvailable()} changes. */
  public void onQuorumChange(Consumer<Boolean> listener) {
    monitor.onQuorumChange(listener);
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
    monitor.close();
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

    public LockEngine build() {
      return new LockEngine(this);
    }
  }
}
