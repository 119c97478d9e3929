package dev.redlockd.server.rpc;

import dev.redlockd.engine.Grant;
import dev.redlockd.engine.InvalidRequestException;
import dev.redlockd.engine.LimitExceededException;
import dev.redlockd.engine.LockDescription;
import dev.redlockd.engine.LeaseRequest;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.NameDescription;
import dev.redlockd.engine.SemaphoreDescription;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.DescribeResponse;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ExtendResponse;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.ForceReleaseResponse;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.PermitHolder;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.proto.v1.ReleaseResponse;
import dev.redlockd.server.access.Access;
import dev.redlockd.server.access.Caller;
import dev.redlockd.server.access.CallerInterceptor;
import dev.redlockd.server.access.LeaseDesk;
import dev.redlockd.server.access.Printable;
import dev.redlockd.server.access.Quotas;
import dev.redlockd.server.tracing.CallSpan;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The gRPC face of the engine: proto in, engine call, proto or status out. No lock logic here. */
public final class LockServiceAdapter extends LockServiceGrpc.LockServiceImplBase {
  private static final Logger log = LoggerFactory.getLogger(LockServiceAdapter.class);

  private final LockEngine engine;
  private final OpenStreams streams;
  private final Access access;
  private final LeaseDesk leases;
  private final boolean allowForceRelease;
  private final Admission admission;

  public LockServiceAdapter(LockEngine engine, OpenStreams streams, Access access, LeaseDesk leases,
      boolean allowForceRelease) {
    this(engine, streams, access, leases, allowForceRelease, Admission.off());
  }

  /** With admission control: new Acquire calls and KeepAlive streams are refused while the engine runs behind. */
  public LockServiceAdapter(LockEngine engine, OpenStreams streams, Access access, LeaseDesk leases,
      boolean allowForceRelease, Admission admission) {
    this.admission = admission;
    this.engine = engine;
    this.streams = streams;
    this.access = access;
    this.leases = leases;
    this.allowForceRelease = allowForceRelease;
  }

  /** The service, with ForceRelease able to name its caller in the log. */
  public ServerServiceDefinition bind() {
    return ServerInterceptors.intercept(bindService(),
        new CallerInterceptor(Set.of(LockServiceGrpc.getForceReleaseMethod().getFullMethodName())));
  }

  @Override
  public void acquire(AcquireRequest request, StreamObserver<AcquireResponse> responses) {
    StatusRuntimeException overloaded = admission.refusal(Admission.Call.ACQUIRE);
    if (overloaded != null) {
      responses.onError(overloaded);
      return;
    }
    Caller caller = Caller.current();
    CompletableFuture<Grant> lease;
    try {
      String resource = request.getResource();
      // permits 0 is a lock; anything else asks for a permit of the semaphore (the engine checks N).
      LeaseRequest.Builder asked = LeaseRequest.forResource(resource)
          .permits(request.getPermits())
          .ttl(request.hasTtl() ? ProtoDurations.fromProto(resource, "ttl", request.getTtl()) : null)
          .waitUpTo(request.hasWait() ? ProtoDurations.fromProto(resource, "wait", request.getWait()) : Duration.ZERO)
          .token(request.getToken())
          .owner(request.getOwner())
          .callerLeavesIn(callerLeavesIn());
      lease = leases.acquire(caller, asked, CallSpan.current().acquireObserver());
    } catch (InvalidRequestException | Quotas.Exhausted e) {
      lease = CompletableFuture.failedFuture(e);
    }
    reply(responses, lease, l -> AcquireResponse.newBuilder().setLease(toProto(l)).build(),
        l -> leases.undeliverable(caller, l, request.getToken()));
  }

  /**
   * The time left before the call's deadline, or null without one. The engine starts no round
   * after it: the deadline's cancel reaches the engine a little later, and a round started in
   * between could take a lock for a caller no longer listening.
   */
  private static Duration callerLeavesIn() {
    Deadline deadline = Context.current().getDeadline();
    return deadline == null ? null : Duration.ofNanos(deadline.timeRemaining(TimeUnit.NANOSECONDS));
  }

  @Override
  public void extend(ExtendRequest request, StreamObserver<ExtendResponse> responses) {
    CompletableFuture<Grant> lease;
    try {
      String resource = request.getResource();
      Duration ttl = request.hasTtl() ? ProtoDurations.fromProto(resource, "ttl", request.getTtl()) : null;
      lease = leases.extend(Caller.current(), resource, request.getPermit(), request.getToken(), ttl);
    } catch (InvalidRequestException e) {
      lease = CompletableFuture.failedFuture(e);
    }
    reply(responses, lease, l -> ExtendResponse.newBuilder().setLease(toProto(l)).build(), l -> { });
  }

  @Override
  public void release(ReleaseRequest request, StreamObserver<ReleaseResponse> responses) {
    CompletableFuture<Boolean> outcome = leases.release(Caller.current(), request.getResource(), request.getPermit(),
        request.getToken());
    reply(responses, outcome,
        released -> ReleaseResponse.newBuilder().setReleased(released).build(), released -> { });
  }

  /** The lock and the semaphore on the name, each as held (or not): they are separate. */
  @Override
  public void describe(DescribeRequest request, StreamObserver<DescribeResponse> responses) {
    reply(responses, engine.describeName(request.getResource()), LockServiceAdapter::toProto, d -> { });
  }

  /**
   * Refused before anything is read unless the server allows it. Each call that reaches the
   * nodes is logged at WARN with its outcome, even when the caller left before the answer (the
   * deletion goes on regardless). Refusals are logged at DEBUG only: any client could send them.
   */
  @Override
  public void forceRelease(ForceReleaseRequest request, StreamObserver<ForceReleaseResponse> responses) {
    if (!allowForceRelease) {
      log.debug("refused ForceRelease from {}: --allow-force-release is not set", CallerInterceptor.current());
      responses.onError(StatusMapper.forceReleaseDisabled().asRuntimeException());
      return;
    }
    String resource = request.getResource();
    int permit = request.getPermit();
    String what = permit == 0 ? "its lock" : "its permit " + Integer.toUnsignedString(permit);
    Caller identified = Caller.current();
    String caller = identified == null ? CallerInterceptor.current()
        : "identity '" + Printable.of(identified.identity()) + "' from " + identified.peer();
    CompletableFuture<Boolean> released = engine.forceRelease(resource, permit);
    released.whenComplete((deleted, failure) -> {
      if (failure == null) {
        log.warn("ForceRelease of resource '{}' by {}: {}", Printable.of(resource), caller,
            deleted ? "deleted " + what : permit == 0 ? "it was not held" : "that permit was not held");
      } else if (!(StatusMapper.unwrap(failure) instanceof InvalidRequestException)) {
        Status status = StatusMapper.toStatus(failure);
        log.warn("ForceRelease of resource '{}' by {} failed: {} {}", Printable.of(resource), caller,
            status.getCode(), status.getDescription());
      }
    });
    // A copy, so that a caller who leaves cancels the answer, not the audit line above.
    reply(responses, released.copy(), r -> ForceReleaseResponse.newBuilder().setReleased(r).build(), r -> { });
  }


  @Override
  public StreamObserver<KeepAliveRequest> keepAlive(StreamObserver<KeepAliveResponse> responses) {
    StatusRuntimeException overloaded = admission.refusal(Admission.Call.KEEP_ALIVE);
    if (overloaded != null) {
      // Refused before it keeps anything: the caller's lease (if it holds one) is as it was.
      responses.onError(overloaded);
      return DISCARD;
    }
    ServerCallStreamObserver<KeepAliveResponse> call = (ServerCallStreamObserver<KeepAliveResponse>) responses;
    Caller caller = Caller.current();
    // The policy may change while the stream lives: each renewal the server makes is checked too.
    KeepAliveStream stream = new KeepAliveStream(engine, streams, call, leases.keptLeases(access, caller));
    try {
      stream.holdUntilEnd(leases.keepAliveStream(caller));
      streams.opened(stream);
    } catch (LimitExceededException | Quotas.Exhausted e) {
      stream.end(StatusMapper.toStatus(e));
    }
    return stream;
  }

  /** Reads what a refused stream's client still sends, and does nothing with it. */
  private static final StreamObserver<KeepAliveRequest> DISCARD = new StreamObserver<>() {
    @Override
    public void onNext(KeepAliveRequest value) {}

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  };

  /**
   * Completes the call from the engine's future. If the caller goes away first (deadline,
   * cancel), the engine's work is cancelled: a waiting Acquire stops retrying. A result that
   * arrives for a caller already gone goes to {@code undeliverable}.
   */
  private static <T, R> void reply(StreamObserver<R> responses, CompletableFuture<T> result, Function<T, R> toProto,
      Consumer<T> undeliverable) {
    ServerCallStreamObserver<R> call = (ServerCallStreamObserver<R>) responses;
    // Fires on the caller's cancel and on its deadline alike.
    call.setOnCancelHandler(() -> result.cancel(false));
    result.whenComplete((value, failure) -> {
      if (call.isCancelled()) {
        if (failure == null) {
          undeliverable.accept(value);
        }
        return;
      }
      if (failure == null) {
        call.onNext(toProto.apply(value));
        call.onCompleted();
      } else {
        call.onError(StatusMapper.toStatus(failure).asRuntimeException());
      }
    });
  }

  static Lease toProto(Grant lease) {
    return Lease.newBuilder()
        .setResource(lease.resource())
        .setToken(lease.token())
        .setValidity(ProtoDurations.toProto(lease.validity()))
        .setFencingToken(lease.fencingToken())
        .setPermit(lease.permit())
        .build();
  }

  static DescribeResponse toProto(NameDescription name) {
    DescribeResponse.Builder b = DescribeResponse.newBuilder();
    LockDescription lock = name.lock();
    if (lock.held()) {
      b.setHeld(true)
          .setOwner(lock.owner())
          .setHolderIdentity(lock.holder())
          .setRemainingTtl(ProtoDurations.toProto(lock.remainingTtl()))
          .setFencingToken(lock.fencingToken())
          .addAllNodes(lock.nodes());
    }
    SemaphoreDescription semaphore = name.semaphore();
    if (!semaphore.holders().isEmpty()) {
      b.setPermits(semaphore.permits()).setFreePermits(semaphore.freePermits());
      for (SemaphoreDescription.PermitDescription held : semaphore.holders()) {
        LockDescription lease = held.lease();
        b.addHolders(PermitHolder.newBuilder()
            .setPermit(held.permit())
            .setOwner(lease.owner())
            .setHolderIdentity(lease.holder())
            .setRemainingTtl(ProtoDurations.toProto(lease.remainingTtl()))
            .setFencingToken(lease.fencingToken())
            .addAllNodes(lease.nodes()));
      }
    }
    return b.build();
  }
}
