package dev.redlockd.client;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.LeaderResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.proto.v1.ReleaseResponse;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The redlockd Java client. Hands out {@link Lease}s and keeps the token, the deadlines and the
 * renewals to itself:
 *
 * <pre>{@code
 * LockClient locks = LockClient.create(channel);
 * LockOptions orderLock = LockOptions.ttl(Duration.ofSeconds(10)).waitUpTo(Duration.ofSeconds(2));
 * try (Lease lease = locks.acquire("orders/42", orderLock)) {
 *   store.write(order, lease.fencingToken());
 * }
 * }</pre>
 *
 * A semaphore's permit is a lease too, of the same type:
 *
 * <pre>{@code
 * LockOptions partnerCall = LockOptions.ttl(Duration.ofSeconds(10)).waitUpTo(Duration.ofSeconds(30));
 * try (Lease permit = locks.acquirePermit("partner-api", 8, partnerCall)) {
 *   partner.call(request); // at most 8 callers at once; permit.permit() says which of the 8
 * }
 * }</pre>
 *
 * The client never creates or closes the channel. It makes each lease's token itself, so an
 * Acquire retried after UNAVAILABLE or DEADLINE_EXCEEDED carries the same token: the server
 * refreshes the lease it may already have granted instead of granting a second one.
 *
 * <p>Give it a channel over several replicas ({@link Channels#forAddresses}) and a replica's
 * restart goes unnoticed: a kept lease's or a leadership's stream that breaks, or stops
 * answering for a quarter of its ttl, is reopened on another replica with the same token, and
 * goes on with the same fencing token or term; a call that finds a replica going away is
 * retried on another within its deadline.
 */
public final class LockClient {
  private static final ScheduledExecutorService SCHEDULER = daemonScheduler();

  private final Channel channel;
  /** Whose reconnect backoff is reset before a kept stream reopens or a call is retried; may be null. */
  private final ManagedChannel reconnecting;
  /** Keeps {@link #reconnecting} trying replicas that are down after a kept stream lost its own; null with it. */
  private final EagerReconnect eager;
  private final ScheduledExecutorService scheduler;
  private final LockServiceGrpc.LockServiceStub stub;
  private final ElectionServiceGrpc.ElectionServiceStub elections;
  private final Duration callTimeout;
  private final RetryPolicy retry;
  private final Duration defaultTtl;
  private final String owner;
  private final LongSupplier nanoClock;
  /** Every kept grant's answer times, which each grant's silence bound follows (RenewalStream). */
  private final SlowestAnswer answerTimes = new SlowestAnswer();

  private LockClient(Builder b) {
    this.channel = b.channel;
    this.reconnecting = b.reconnecting != null ? b.reconnecting
        : b.channel instanceof ManagedChannel managed ? managed : null;
    this.scheduler = b.scheduler;
    Channel calls = b.traced ? io.grpc.ClientInterceptors.intercept(b.channel, TraceContext.interceptor()) : b.channel;
    this.stub = LockServiceGrpc.newStub(calls);
    this.elections = ElectionServiceGrpc.newStub(calls);
    this.callTimeout = b.callTimeout;
    this.retry = b.retry;
    this.defaultTtl = b.defaultTtl;
    this.owner = b.owner;
    this.nanoClock = b.nanoClock;
    this.eager = reconnecting == null ? null : new EagerReconnect(reconnecting, scheduler, nanoClock);
  }

  public static LockClient create(Channel channel) {
    return builder(channel).build();
  }

  public static Builder builder(Channel channel) {
    return new Builder(channel);
  }

  /**
   * Takes the lock, waiting up to the options' wait while someone else holds it.
   *
   * @throws LockNotAcquiredException when it is still held by someone else after the wait
   * @throws LockServiceException for every other failure, with its gRPC status
   */
  public Lease acquire(String resource, LockOptions options) {
    return await(acquireAsync(resource, options));
  }

  /**
   * {@link #acquire}, with an empty result instead of {@link LockNotAcquiredException} when
   * someone else still holds the lock after the options' wait (zero by default: one attempt).
   */
  public Optional<Lease> tryAcquire(String resource, LockOptions options) {
    try {
      return Optional.of(acquire(resource, options));
    } catch (LockNotAcquiredException e) {
      return Optional.empty();
    }
  }

  /**
   * Asynchronous {@link #acquire}. Cancelling the future cancels the call; a lease granted anyway
   * is released.
   */
  public CompletableFuture<Lease> acquireAsync(String resource, LockOptions options) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(options, "options");
    return startAcquire(resource, 0, options);
  }

  /**
   * Takes one of the {@code permits} permits of the semaphore {@code resource} (at most that
   * many holders at once), waiting up to the options' wait while all are held. The lease is a
   * lock's in every way (extend, keep alive, release, fencing token) and says which permit it
   * holds ({@link Lease#permit()}). Every caller of one semaphore must give the same
   * {@code permits} (at most 1024); a semaphore and a lock of the same name are separate.
   *
   * @throws LockNotAcquiredException when every permit is still held by others after the wait
   * @throws LockServiceException for every other failure, with its gRPC status
   *     (FAILED_PRECONDITION when the holders were given another number of permits)
   * @throws IllegalArgumentException when {@code permits} is below 1 (0 would ask for a lock)
   */
  public Lease acquirePermit(String resource, int permits, LockOptions options) {
    return await(acquirePermitAsync(resource, permits, options));
  }

  /** {@link #acquirePermit}, with an empty result when every permit is still held by others after the wait. */
  public Optional<Lease> tryAcquirePermit(String resource, int permits, LockOptions options) {
    try {
      return Optional.of(acquirePermit(resource, permits, options));
    } catch (LockNotAcquiredException e) {
      return Optional.empty();
    }
  }

  /**
   * Asynchronous {@link #acquirePermit}. Cancelling the future cancels the call; a permit granted
   * anyway is released.
   */
  public CompletableFuture<Lease> acquirePermitAsync(String resource, int permits, LockOptions options) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(options, "options");
    if (permits < 1) {
      throw new IllegalArgumentException("permits must be at least 1, was " + permits);
    }
    return startAcquire(resource, permits, options);
  }

  private CompletableFuture<Lease> startAcquire(String resource, int permits, LockOptions options) {
    PendingAcquire pending = new PendingAcquire(this, resource, permits, options, LockTokens.newToken());
    pending.attempt(1, 0, false);
    return pending.result;
  }

  /** The ttl the options give, or this client's default. */
  Duration ttl(LockOptions options) {
    return options.ttlOr(defaultTtl);
  }

  /** An Acquire's request, but for its token and wait. */
  AcquireRequest.Builder acquireRequest(String resource, int permits, LockOptions options) {
    return AcquireRequest.newBuilder()
        .setResource(resource)
        .setPermits(permits)
        .setTtl(ProtoTime.toProto(ttl(options)))
        .setOwner(options.ownerOr(owner));
  }

  /** Sends one Acquire; the deadline leaves the server the whole wait, plus the usual time for a call. */
  UnaryCall<AcquireRequest, AcquireResponse> sendAcquire(AcquireRequest request, Duration wait) {
    UnaryCall<AcquireRequest, AcquireResponse> call = new UnaryCall<>();
    stub.withDeadlineAfter(wait.plus(callTimeout).toNanos(), TimeUnit.NANOSECONDS)
        .acquire(request.toBuilder().setWait(ProtoTime.toProto(wait)).build(), call);
    return call;
  }

  RetryPolicy retryPolicy() {
    return retry;
  }

  Duration callTimeout() {
    return callTimeout;
  }

  /**
   * How long one attempt of an idempotent call other than Acquire (whose attempts carry its wait
   * and are counted by the retry policy) waits for its answer: half the call timeout. A replica
   * gone silent (a frozen host, a partition: its connection stays open until a keepalive ping
   * fails, 11 s later) neither answers nor refuses, and the client cannot tell it from a slow one
   * but by time; most calls have no ttl to derive a bound from (Leader, Describe, ForceRelease).
   * Half the call timeout leaves the retry, which round_robin puts on the next replica, as long as
   * the first attempt had, far above what a healthy replica takes (one Redis round).
   */
  Duration attemptTimeout() {
    return callTimeout.dividedBy(2);
  }

  /**
   * Runs a retry after {@code waitNanos}. The channel's reconnect backoff is reset now, so that a
   * replica found down a while ago is tried again during the wait rather than after gRPC's own
   * backoff (1 s, growing to minutes): the retry then finds it, or another one, ready.
   */
  void retryAfter(Runnable retryAttempt, long waitNanos) {
    reconnectNow();
    scheduler.schedule(retryAttempt, waitNanos, TimeUnit.NANOSECONDS);
  }

  /** The wait before the retry after failed attempt {@code attempt}: the pushback's if there is one. */
  long retryWaitNanos(int attempt, long pushbackNanos) {
    return pushbackNanos >= 0 ? Pushback.jittered(pushbackNanos) : retry.backoff(attempt).toNanos();
  }

  /**
   * Runs {@code work} while holding the lock: acquires (waiting up to the options' wait), keeps
   * the lease alive, runs the work on this thread and releases. If the lease is lost meanwhile,
   * this thread is interrupted and the call throws {@link LeaseLostException}.
   */
  public <T> T withLock(String resource, LockOptions options, Callable<T> work) throws Exception {
    return withLock(resource, options, lease -> work.call());
  }

  /**
   * {@link #withLock(String, LockOptions, Callable)} for work that needs the lease, to send its
   * {@link Lease#fencingToken()} with each write it protects.
   */
  public <T> T withLock(String resource, LockOptions options, LockedWork<T> work) throws Exception {
    return withLease(acquire(resource, options), work);
  }

  /**
   * Runs {@code work} while holding one of the semaphore's {@code permits} permits, as
   * {@link #withLock(String, LockOptions, Callable)} does with a lock.
   */
  public <T> T withPermit(String resource, int permits, LockOptions options, Callable<T> work) throws Exception {
    return withPermit(resource, permits, options, lease -> work.call());
  }

  /**
   * {@link #withPermit(String, int, LockOptions, Callable)} for work that needs the lease, to
   * send its {@link Lease#fencingToken()} (which rises per permit) with each write.
   */
  public <T> T withPermit(String resource, int permits, LockOptions options, LockedWork<T> work) throws Exception {
    return withLease(acquirePermit(resource, permits, options), work);
  }

  /** Keeps {@code lease} alive while the work runs, interrupting it on a loss; releases after. */
  private <T> T withLease(Lease lease, LockedWork<T> work) throws Exception {
    Thread worker = Thread.currentThread();
    // Guards `working`, so that an interrupt for a lost lease can never reach this thread after
    // the work is over (it would hit whatever the caller does next).
    Object guard = new Object();
    boolean[] working = {true};
    AtomicReference<LeaseLostException> lost = new AtomicReference<>();
    lease.onLost(e -> {
      synchronized (guard) {
        if (working[0] && lost.compareAndSet(null, e)) {
          worker.interrupt();
        }
      }
    });
    try {
      lease.keepAlive();
      T result;
      try {
        result = work.run(lease);
      } catch (Exception | Error e) {
        stopWorking(guard, working);
        throwIfLost(lost, e);
        throw e;
      }
      stopWorking(guard, working);
      throwIfLost(lost, null);
      return result;
    } finally {
      lease.close();
    }
  }

  private static void stopWorking(Object guard, boolean[] working) {
    synchronized (guard) {
      working[0] = false;
    }
  }

  private static void throwIfLost(AtomicReference<LeaseLostException> lost, Throwable fromWork) {
    LeaseLostException e = lost.get();
    if (e != null) {
      Thread.interrupted(); // the interrupt was ours, not the caller's
      if (fromWork != null && fromWork != e) {
        e.addSuppressed(fromWork);
      }
      throw e;
    }
  }

  /**
   * Campaigns in an election until this caller leads it (or until the options' wait, when they
   * give one), then keeps leading until the returned {@link Leadership} is closed or lost. The
   * options' value is what {@link #leader} and {@link #observe} report while it leads.
   *
   * @throws LockNotAcquiredException when someone else still leads after the options' wait
   */
  public Leadership campaign(String election, CampaignOptions options) {
    return await(campaignAsync(election, options));
  }

  /**
   * Asynchronous {@link #campaign}. Cancelling the future withdraws the candidacy (a leadership
   * granted in that instant is resigned).
   */
  public CompletableFuture<Leadership> campaignAsync(String election, CampaignOptions options) {
    Objects.requireNonNull(election, "election");
    Objects.requireNonNull(options, "options");
    Campaigner campaigner = new Campaigner(this, election, options.leaderValue(), options.ttlOr(defaultTtl));
    campaigner.start(elections, options.waitOrNull());
    return campaigner.result;
  }

  /**
   * Runs {@code work} while leading the election: campaigns (as {@link #campaign}), runs the work
   * on this thread with the {@link Leadership}, and resigns when it returns, returning its
   * result. The moment the leadership is lost (a guard before its deadline, as
   * {@link Leadership#onLost}), this thread is interrupted; once the work has returned, lead
   * throws the {@link LeaseLostException} (anything the work threw then is suppressed in it).
   * Work that throws while leading is resigned for and rethrown. Interrupting this thread
   * cancels the whole: while campaigning, lead throws {@link InterruptedException}; while
   * working, the work sees the interrupt, and lead resigns once it returns.
   */
  public <T> T lead(String election, CampaignOptions options, LeaderWork<T> work) throws Exception {
    return lead(election, options, OnLoss.FAIL, work);
  }

  /**
   * {@link #lead(String, CampaignOptions, LeaderWork)}; with {@link OnLoss#REQUEUE}, a lost
   * leadership is campaigned for again and the work run again, until the work returns or
   * throws while leading, or this thread is interrupted.
   */
  public <T> T lead(String election, CampaignOptions options, OnLoss onLoss, LeaderWork<T> work) throws Exception {
    Objects.requireNonNull(election, "election");
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(onLoss, "onLoss");
    Objects.requireNonNull(work, "work");
    return new LeaderRun<>(this, election, options, onLoss, work).run();
  }

  /** The election's leader now, or empty when it has none. */
  public Optional<Leader> leader(String election) {
    Objects.requireNonNull(election, "election");
    BiConsumer<ElectionServiceGrpc.ElectionServiceStub, StreamObserver<LeaderResponse>> leader = (s, observer) ->
        s.leader(LeaderRequest.newBuilder().setElection(election).build(), observer);
    LeaderResponse response = await(callAsync(elections, leader, () -> true));
    return response.hasLeader() ? Optional.of(Leader.of(response.getLeader())) : Optional.empty();
  }

  /**
   * Calls back with the election's leader (or empty) now and after every change, from a client
   * thread, one call at a time, until the observation is closed.
   */
  public Observation observe(String election, Consumer<Optional<Leader>> callback) {
    Objects.requireNonNull(election, "election");
    Objects.requireNonNull(callback, "callback");
    Observation observation = new Observation(this, elections, election, callback);
    observation.open();
    return observation;
  }

  /**
   * The election's leader as a stream this thread reads: {@link LeaderUpdates#next()} returns
   * the leader (or empty) now, then each change, in order, once each, until closed.
   */
  public LeaderUpdates observe(String election) {
    Objects.requireNonNull(election, "election");
    LeaderUpdates updates = new LeaderUpdates(this, elections, election);
    updates.open();
    return updates;
  }

  /**
   * Fire and forget: a Release nobody waits for, retried on UNAVAILABLE within the call timeout
   * like any other, so that a lease given up is freed through whichever replica is up. If it
   * fails after all, the lease runs out by itself.
   */
  void releaseQuietly(String resource, int permit, String token) {
    BiConsumer<LockServiceGrpc.LockServiceStub, StreamObserver<ReleaseResponse>> release = (s, observer) -> s.release(
        ReleaseRequest.newBuilder().setResource(resource).setPermit(permit).setToken(token).build(), observer);
    callAsync(stub, release, () -> true);
  }

  /**
   * A unary call other than Acquire, UNAVAILABLE retried ({@link IdempotentCall}) while
   * {@code stillWorthIt} holds. Blocking.
   */
  <Resp> Resp call(BiConsumer<LockServiceGrpc.LockServiceStub, StreamObserver<Resp>> method,
      BooleanSupplier stillWorthIt) {
    return await(callAsync(stub, method, stillWorthIt));
  }

  private <S extends AbstractStub<S>, Resp> CompletableFuture<Resp> callAsync(S service,
      BiConsumer<S, StreamObserver<Resp>> method, BooleanSupplier stillWorthIt) {
    return IdempotentCall.start(this, service, method, stillWorthIt);
  }

  /** Waits for a future of this client; failures come out as {@link LockServiceException}. */
  <T> T await(CompletableFuture<T> future) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      future.cancel(false);
      Thread.currentThread().interrupt();
      throw new LockServiceException(Status.CANCELLED.withDescription("interrupted"), e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof LockServiceException lse) {
        throw lse;
      }
      throw LockServiceException.of(CallStatus.of(e.getCause()), e.getCause());
    }
  }

  /** {@link #await(CompletableFuture)}, giving up after the default call deadline. */
  <T> T awaitCall(CompletableFuture<T> future) {
    return awaitCall(future, callTimeout);
  }

  /** As {@link #awaitCall(CompletableFuture)}, waiting up to {@code timeout}. */
  <T> T awaitCall(CompletableFuture<T> future, Duration timeout) {
    try {
      return await(future.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS));
    } catch (LockServiceException e) {
      if (e.getCause() instanceof java.util.concurrent.TimeoutException) {
        throw new LockServiceException(Status.DEADLINE_EXCEEDED.withDescription(
            "no answer within " + timeout.toMillis() + " ms"), e.getCause());
      }
      throw e;
    }
  }

  LockServiceGrpc.LockServiceStub streamingStub() {
    return stub;
  }

  /**
   * Before a kept stream is reopened or a call retried: replicas the channel found down
   * reconnect now rather than after gRPC's reconnect backoff. Only a ManagedChannel can be asked
   * to: the one given to the builder, or named by {@link Builder#resetBackoffOn}.
   */
  void reconnectNow() {
    if (reconnecting != null) {
      reconnecting.resetConnectBackoff();
    }
  }

  /**
   * Before a kept stream reopens elsewhere: {@link #reconnectNow()}, and the replicas found down
   * are tried every 100 ms for a while ({@link EagerReconnect}), so that one back from a restart is
   * connected before the next stream needs a home.
   */
  void keptStreamMoving() {
    if (eager != null) {
      eager.replicaLost();
    }
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  SlowestAnswer answerTimes() {
    return answerTimes;
  }

  long nanoTime() {
    return nanoClock.getAsLong();
  }

  private static ScheduledExecutorService daemonScheduler() {
    ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "redlockd-client");
      t.setDaemon(true);
      return t;
    });
    s.setRemoveOnCancelPolicy(true);
    return s;
  }

  /** Options; every one has a default. */
  public static final class Builder {
    private final Channel channel;
    private Duration callTimeout = Duration.ofSeconds(5);
    private RetryPolicy retry = RetryPolicy.defaults();
    private Duration defaultTtl = Duration.ofSeconds(30);
    private String owner = defaultOwner();
    private LongSupplier nanoClock = System::nanoTime;
    private boolean traced;
    private ScheduledExecutorService scheduler = SCHEDULER;
    private ManagedChannel reconnecting;

    private Builder(Channel channel) {
      this.channel = Objects.requireNonNull(channel, "channel");
    }

    /** Deadline of each call; an Acquire gets its wait on top (default 5 s). */
    public Builder callTimeout(Duration timeout) {
      this.callTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    public Builder retryPolicy(RetryPolicy policy) {
      this.retry = Objects.requireNonNull(policy);
      return this;
    }

    /** The ttl of a lease or leadership whose options give none ({@link LockOptions#defaultTtl()}; default 30 s). */
    public Builder defaultTtl(Duration ttl) {
      this.defaultTtl = Objects.requireNonNull(ttl);
      return this;
    }

    /** Free text operators see for this client's leases (default: host and pid). */
    public Builder owner(String owner) {
      this.owner = Objects.requireNonNull(owner);
      return this;
    }

    /**
     * Sends the caller's OpenTelemetry trace context (W3C) with every call ({@link TraceContext}),
     * so that the server's spans join the caller's trace.
     *
     * @throws IllegalStateException when io.opentelemetry:opentelemetry-api is not on the classpath
     */
    public Builder propagateTraceContext() {
      if (!TraceContext.available()) {
        throw new IllegalStateException("propagateTraceContext needs io.opentelemetry:opentelemetry-api on the "
            + "classpath");
      }
      this.traced = true;
      return this;
    }

    /**
     * The channel whose reconnect backoff the client resets before a kept stream reopens or a
     * call is retried (so that a replica back for a moment is used at once), when the channel
     * given to {@link LockClient#builder} is not itself a {@link ManagedChannel}: the one under
     * an intercepted channel ({@code ClientInterceptors.intercept(managed, ...)}), say.
     */
    public Builder resetBackoffOn(ManagedChannel managed) {
      this.reconnecting = Objects.requireNonNull(managed, "managed");
      return this;
    }

    Builder nanoClock(LongSupplier clock) {
      this.nanoClock = clock;
      return this;
    }

    /** Where the client's timers run: renewals, deadlines, retries (tests pass one they drive). */
    Builder scheduler(ScheduledExecutorService timers) {
      this.scheduler = timers;
      return this;
    }

    public LockClient build() {
      return new LockClient(this);
    }

    private static String defaultOwner() {
      String host = System.getenv().getOrDefault("HOSTNAME", "unknown-host");
      return host + " pid " + ProcessHandle.current().pid();
    }
  }
}
