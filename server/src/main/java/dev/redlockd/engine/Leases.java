package dev.redlockd.engine;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The leases of one space on the nodes (see {@link Keys}): the user's locks, or the elections.
 * The same algorithm and rules in each, with keys, waiters and release notices of its own.
 * Every method validates its input ({@link InvalidRequestException}) and completes
 * asynchronously; failures are the typed {@link LockEngineException}s.
 */
public final class Leases {
  private final EngineConfig config;
  private final RequestRules rules;
  private final Keys keys;
  private final Redlock redlock;
  private final OperatorRounds operator;
  private final NodeEvents events;
  private final Waiters waiters;
  private final RenewalBatch renewals;
  private final ScheduledExecutorService scheduler;
  private final LongSupplier nanoClock;
  private final Random jitter;
  private final SecureRandom tokens;
  private final AtomicInteger waitingCalls;
  private final KeptLeaseIndex kept = new KeptLeaseIndex();

  Leases(Shared shared, RequestRules rules, Keys keys, Redlock redlock, OperatorRounds operator) {
    this.config = shared.config;
    this.rules = rules;
    this.keys = keys;
    this.redlock = redlock;
    this.operator = operator;
    this.events = shared.events;
    this.waiters = new Waiters(keys, events);
    this.scheduler = shared.scheduler;
    this.nanoClock = shared.nanoClock;
    this.jitter = shared.jitter;
    this.tokens = shared.tokens;
    this.waitingCalls = shared.waitingCalls;
    this.renewals = new RenewalBatch(this, scheduler, nanoClock, shared.backlog);
  }

  /** What every space of one engine shares. */
  record Shared(EngineConfig config, NodeEvents events, ScheduledExecutorService scheduler,
      LongSupplier nanoClock, Random jitter, SecureRandom tokens, AtomicInteger waitingCalls, Backlog backlog) {}

  /**
   * Takes the lock, retrying while it is held by someone else until {@code wait} runs out,
   * storing {@code owner} (free text, at most 256 UTF-8 bytes) with it; a refresh with the same
   * token replaces it. An empty {@code token} makes the engine choose one. Cancel the future to
   * give up: a lease granted in the meantime is released when the engine chose its token; with
   * the caller's token it is left to the caller (who may be retrying with it) and runs out at its ttl.
   */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token, String owner) {
    return acquire(resource, ttl, wait, token, owner, "");
  }

  /**
   * {@link #acquire(String, Duration, Duration, String, String)} for a caller the server knows
   * by {@code holder} (its identity under an access policy), which Describe then reports.
   */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token, String owner,
      String holder) {
    return acquire(resource, ttl, wait, token, owner, holder, null);
  }

  /**
   * {@link #acquire(String, Duration, Duration, String, String, String)} for a caller that stops
   * listening in {@code callerLeavesIn} (its call's deadline; null for none): the wait ends then,
   * and no round starts from then on, even if the caller's cancel has not arrived yet.
   */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token, String owner,
      String holder, Duration callerLeavesIn) {
    return acquire(resource, ttl, wait, token, owner, holder, callerLeavesIn, AcquireObserver.NONE);
  }

  /**
   * {@link #acquire(String, Duration, Duration, String, String, String, Duration)}, telling
   * {@code observer} how each round went.
   */
  public CompletableFuture<Grant> acquire(String resource, Duration ttl, Duration wait, String token, String owner,
      String holder, Duration callerLeavesIn, AcquireObserver observer) {
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
    LeaseRounds rounds = LeaseRounds.lock(redlock, resource, leaseToken,
        OwnerText.store(owner, Objects.requireNonNull(holder, "holder")), ttl);
    return start(resource, rounds, !token.isEmpty(), wait, callerLeavesIn, observer);
  }

  /**
   * Takes one of {@code permits} permits of the semaphore on {@code resource}, as
   * {@link #acquire(String, Duration, Duration, String, String, String, Duration)} takes a lock:
   * each permit is a lease of its own, and the grant says which ({@link Grant#permit()}). Callers
   * that give another N than the semaphore's while a permit of it is held fail with
   * {@link SemaphoreMismatchException}. A token that already holds a permit gets that permit
   * back, refreshed. Waiting callers are woken by the release of any permit, through any server.
   */
  public CompletableFuture<Grant> acquirePermit(String resource, int permits, Duration ttl, Duration wait,
      String token, String owner, String holder, Duration callerLeavesIn) {
    return acquirePermit(resource, permits, ttl, wait, token, owner, holder, callerLeavesIn, AcquireObserver.NONE);
  }

  /** {@link #acquirePermit(String, int, Duration, Duration, String, String, String, Duration)}, observed. */
  public CompletableFuture<Grant> acquirePermit(String resource, int permits, Duration ttl, Duration wait,
      String token, String owner, String holder, Duration callerLeavesIn, AcquireObserver observer) {
    try {
      rules.resource(resource);
      rules.permits(resource, permits);
      rules.ttl(resource, ttl);
      rules.waitTime(resource, Objects.requireNonNull(wait, "wait"));
      rules.token(resource, token, false);
      rules.owner(resource, Objects.requireNonNull(owner, "owner"));
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    String leaseToken = token.isEmpty() ? LockToken.generate(tokens) : token;
    LeaseRounds rounds = new PermitRounds(redlock, jitter, resource, permits, leaseToken,
        OwnerText.store(owner, Objects.requireNonNull(holder, "holder")), ttl);
    return start(resource, rounds, !token.isEmpty(), wait, callerLeavesIn, observer);
  }

  private CompletableFuture<Grant> start(String resource, LeaseRounds rounds, boolean tokenFromCaller, Duration wait,
      Duration callerLeavesIn, AcquireObserver observer) {
    boolean waits = !wait.isZero();
    AcquireOperation operation = new AcquireOperation(redlock, rounds, waiters, scheduler, nanoClock, jitter,
        config.retryDelay(), tokenFromCaller, wait, callerLeavesIn, Objects.requireNonNull(observer, "observer"));
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

  /**
   * Refreshes the lease that {@code token} holds with a new owner text and ttl: one Acquire
   * round under that token, answered in the words of a held lease, as {@link #extend} is. The
   * lease is not held ({@link LeaseNotHeldException}) only when the round shows that no quorum
   * can hold it; when the nodes that did not answer could still make one with those that took
   * the refresh, the outcome is unknown ({@link QuorumUnavailableException}): the lease may
   * still be held, and the refresh may be tried again. An Acquire would say ABORTED in both
   * cases, which is right for a caller that holds nothing, not for a holder.
   */
  public CompletableFuture<Grant> refresh(String resource, String token, Duration ttl, String owner) {
    try {
      rules.resource(resource);
      rules.token(resource, token, true);
      rules.ttl(resource, ttl);
      rules.owner(resource, Objects.requireNonNull(owner, "owner"));
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    return redlock.acquire(resource, token, OwnerText.store(owner, ""), ttl).exceptionallyCompose(failure -> {
      Throwable cause = failure instanceof CompletionException && failure.getCause() != null
          ? failure.getCause() : failure;
      if (cause instanceof LockHeldException held) {
        return CompletableFuture.failedFuture(held.silentCouldMakeAQuorum()
            ? new QuorumUnavailableException("resource '" + resource + "': the refresh reached no quorum, and the"
                + " nodes that did not answer may still hold the lease (" + held.getMessage() + ")")
            : new LeaseNotHeldException("lease on resource '" + resource + "' is not held (" + held.getMessage()
                + ")"));
      }
      return CompletableFuture.failedFuture(cause);
    });
  }

  /**
   * Renews a held lease for {@code ttl} from now; {@link LeaseNotHeldException} if it is not held.
   * A lease that this server keeps alive takes the new ttl and validity, so that its next renewal
   * comes in time for a shorter ttl and its JEOPARDY answers report what the nodes hold.
   */
  public CompletableFuture<Grant> extend(String resource, String token, Duration ttl) {
    return extend(resource, 0, token, ttl);
  }

  /** {@link #extend(String, String, Duration)} for a semaphore's permit (1..N); permit 0 is the lock. */
  public CompletableFuture<Grant> extend(String resource, int permit, String token, Duration ttl) {
    try {
      rules.resource(resource);
      rules.permit(resource, permit);
      rules.token(resource, token, true);
      rules.ttl(resource, ttl);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    long sentNanos = nanoClock.getAsLong();
    return redlock.extend(resource, permit, token, ttl).whenComplete((grant, failure) -> {
      if (grant != null) {
        kept.forEach(resource, token, lease -> lease.extendedElsewhere(grant, sentNanos, ttl));
      }
    });
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
    return release(resource, 0, token);
  }

  /** {@link #release(String, String)} for a semaphore's permit (1..N); permit 0 is the lock. */
  public CompletableFuture<Boolean> release(String resource, int permit, String token) {
    try {
      rules.resource(resource);
      rules.permit(resource, permit);
      rules.token(resource, token, true);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    String notice = redlock.newNotice();
    CompletableFuture<Tally> releasing = redlock.release(resource, permit, token, notice);
    waiters.handOn(resource, notice); // its round follows the release's scripts to every node
    return releasing.thenApply(tally -> {
      if (tally.yes() > 0) {
        waiters.released(resource, notice);
      }
      if (tally.quorumSaidYes()) {
        return true;
      }
      if (!tally.quorumVoted() || tally.silentCouldMakeAQuorum()) {
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
    return forceRelease(resource, 0);
  }

  /** {@link #forceRelease(String)} of one permit (1..N) of the semaphore; permit 0 is the lock. */
  public CompletableFuture<Boolean> forceRelease(String resource, int permit) {
    try {
      rules.resource(resource);
      rules.permit(resource, permit);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    return operator.forceRelease(resource, permit).thenApply(tally -> {
      if (tally.yes() > 0) {
        announceFree(resource);
      }
      if (!tally.quorumVoted()) {
        throw QuorumUnavailableException.of(resource, tally);
      }
      return tally.yes() > 0;
    });
  }

  /**
   * The semaphore on the resource, read from every node at once: its N and who holds each permit
   * (a snapshot, as {@link #describe} is). {@link SemaphoreDescription#NONE} when no node knows
   * of one.
   */
  public CompletableFuture<SemaphoreDescription> describeSemaphore(String resource) {
    try {
      rules.resource(resource);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    return operator.describePermits(resource);
  }

  /**
   * A lease to keep alive for its holder; nothing is sent until {@link KeptLease#renewNow}.
   * The first renewal checks that the lease is held.
   */
  public KeptLease keep(String resource, String token, Duration ttl, KeptLease.Listener listener) {
    return keep(resource, 0, token, ttl, listener);
  }

  /** {@link #keep(String, String, Duration, KeptLease.Listener)} for a semaphore's permit (1..N). */
  public KeptLease keep(String resource, int permit, String token, Duration ttl, KeptLease.Listener listener) {
    rules.resource(resource);
    rules.permit(resource, permit);
    rules.token(resource, token, true);
    rules.ttl(resource, ttl);
    KeptLease lease = new KeptLease(this, scheduler, renewals, nanoClock, resource, permit, token, ttl, listener);
    kept.add(lease);
    return lease;
  }

  /** The most a grant for {@code ttl} leaves to rely on, counted from when it was asked for. */
  Duration validityBound(Duration ttl) {
    return ttl.minus(config.drift(ttl));
  }

  /**
   * A kept lease's first renewal held: the keepers of the same lease that were here before it
   * (its holder's streams it replaced) are told, each on the scheduler (a stream's listener ends
   * its stream; this runs on another stream's renewal).
   */
  void tookOver(KeptLease newer) {
    kept.before(newer).forEach(older -> scheduler.execute(older::superseded));
  }

  /** A kept lease whose renewals ended: a unary Extend no longer concerns it. */
  void unkept(KeptLease lease) {
    kept.remove(lease);
  }

  /**
   * The resource's lock went away without a release through this space's release.lua (deleted
   * by force, or found gone by a renewal, perhaps expired): tell the waiters on every server.
   */
  void announceFree(String resource) {
    String notice = redlock.newNotice();
    waiters.released(resource, notice);
    events.publish(keys.releasedChannel(resource), notice);
  }

  /** The input rules of this space, in its words. */
  public RequestRules rules() {
    return rules;
  }

  /** Told of what is announced about one resource (see {@link #announceChange}); called on an I/O thread. */
  public interface ChangeListener {
    void changed(String payload);

    /** A node now delivers the announcements: any made before may have been missed. */
    void subscribed();
  }

  /**
   * Tells every server that listens to the resource's changes (on all nodes, best effort):
   * what builds on these leases (elections) says who holds them, without a read.
   */
  public void announceChange(String resource, String payload) {
    events.publish(keys.changesChannel(resource), payload);
  }

  /**
   * Hands the resource's announcements to {@code listener} until the returned handle is
   * closed. One listener per resource per engine; opening and closing one must not race.
   */
  public AutoCloseable listenForChanges(String resource, ChangeListener listener) {
    String channel = keys.changesChannel(resource);
    events.listen(channel, new NodeEvents.Handler() {
      @Override
      public void message(String payload) {
        listener.changed(payload);
      }

      @Override
      public void subscribed() {
        listener.subscribed();
      }
    });
    return () -> events.stop(channel);
  }
}
