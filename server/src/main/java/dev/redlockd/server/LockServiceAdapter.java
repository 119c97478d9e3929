package dev.redlockd.server;

import dev.redlockd.engine.InvalidRequestException;
import dev.redlockd.engine.LimitExceededException;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ExtendResponse;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.proto.v1.ReleaseResponse;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;

/** The gRPC face of the engine: proto in, engine call, proto or status out. No lock logic here. */
final class LockServiceAdapter extends LockServiceGrpc.LockServiceImplBase {
  private final LockEngine engine;
  private final KeepAliveStreams streams;
  private final boolean releaseOnDisconnect;

  LockServiceAdapter(LockEngine engine, KeepAliveStreams streams, boolean releaseOnDisconnect) {
    this.engine = engine;
    this.streams = streams;
    this.releaseOnDisconnect = releaseOnDisconnect;
  }

  @Override
  public void acquire(AcquireRequest request, StreamObserver<AcquireResponse> responses) {
    CompletableFuture<dev.redlockd.engine.Lease> lease;
    try {
      String resource = request.getResource();
      engine.rules().resource(resource);
      engine.rules().owner(resource, request.getOwner());
      Duration ttl = request.hasTtl() ? ProtoDurations.fromProto(resource, "ttl", request.getTtl()) : null;
      Duration wait = request.hasWait()
          ? ProtoDurations.fromProto(resource, "wait", request.getWait()) : Duration.ZERO;
      lease = engine.acquire(resource, ttl, wait, request.getToken());
    } catch (InvalidRequestException e) {
      lease = CompletableFuture.failedFuture(e);
    }
    // A lease granted just as the caller left cannot reach it. With a token the server made, no
    // one else can release it; with the caller's own token, the caller may be retrying with it.
    boolean serverMadeToken = request.getToken().isEmpty();
    reply(responses, lease, l -> AcquireResponse.newBuilder().setLease(toProto(l)).build(), l -> {
      if (serverMadeToken) {
        engine.release(l.resource(), l.token());
      }
    });
  }

  @Override
  public void extend(ExtendRequest request, StreamObserver<ExtendResponse> responses) {
    CompletableFuture<dev.redlockd.engine.Lease> lease;
    try {
      String resource = request.getResource();
      Duration ttl = request.hasTtl() ? ProtoDurations.fromProto(resource, "ttl", request.getTtl()) : null;
      lease = engine.extend(resource, request.getToken(), ttl);
    } catch (InvalidRequestException e) {
      lease = CompletableFuture.failedFuture(e);
    }
    reply(responses, lease, l -> ExtendResponse.newBuilder().setLease(toProto(l)).build(), l -> { });
  }

  @Override
  public void release(ReleaseRequest request, StreamObserver<ReleaseResponse> responses) {
    reply(responses, engine.release(request.getResource(), request.getToken()),
        released -> ReleaseResponse.newBuilder().setReleased(released).build(), released -> { });
  }

  @Override
  public StreamObserver<KeepAliveRequest> keepAlive(StreamObserver<KeepAliveResponse> responses) {
    ServerCallStreamObserver<KeepAliveResponse> call = (ServerCallStreamObserver<KeepAliveResponse>) responses;
    KeepAliveStream stream = new KeepAliveStream(engine, streams, call, releaseOnDisconnect);
    try {
      streams.opened(stream);
    } catch (LimitExceededException e) {
      stream.end(StatusMapper.toStatus(e));
    }
    return stream;
  }

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

  static Lease toProto(dev.redlockd.engine.Lease lease) {
    return Lease.newBuilder()
        .setResource(lease.resource())
        .setToken(lease.token())
        .setValidity(ProtoDurations.toProto(lease.validity()))
        .setFencingToken(lease.fencingToken())
        .build();
  }
}
