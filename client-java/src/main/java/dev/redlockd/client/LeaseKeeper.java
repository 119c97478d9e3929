package dev.redlockd.client;

import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The client end of a KeepAlive stream: moves the lease's local deadline after each renewal
 * and reports the lease lost when the stream ends without the holder having asked.
 *
 * <p>The server counts a renewal's validity from when it finished; the answer reaches the
 * client later. The deadline is therefore the time the answer arrived, less the round trip
 * measured on the first exchange, plus the validity: never later than the server's.
 */
final class LeaseKeeper implements ClientResponseObserver<KeepAliveRequest, KeepAliveResponse> {
  private final Lease lease;
  private final LongSupplier nanoClock;
  private final CompletableFuture<Status> ended = new CompletableFuture<>();
  private volatile ClientCallStreamObserver<KeepAliveRequest> requests;
  private volatile boolean closing;
  private volatile long firstSentNanos;
  private volatile long roundTripNanos = -1;

  LeaseKeeper(Lease lease, LongSupplier nanoClock) {
    this.lease = lease;
    this.nanoClock = nanoClock;
  }

  void start(LockServiceGrpc.LockServiceStub stub, String token, Duration ttl) {
    stub.keepAlive(this);
    firstSentNanos = nanoClock.getAsLong();
    requests.onNext(KeepAliveRequest.newBuilder()
        .setResource(lease.resource())
        .setToken(token)
        .setTtl(ProtoTime.toProto(ttl))
        .build());
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<KeepAliveRequest> requestStream) {
    requests = requestStream;
  }

  @Override
  public void onNext(KeepAliveResponse response) {
    long now = nanoClock.getAsLong();
    if (roundTripNanos < 0) {
      roundTripNanos = now - firstSentNanos;
    }
    Duration validity = ProtoTime.fromProto(response.getLease().getValidity());
    lease.renewed(now - roundTripNanos + validity.toNanos());
  }

  @Override
  public void onError(Throwable t) {
    Status status = Status.fromThrowable(t);
    ended.complete(status);
    if (!closing) {
      lease.lost(status);
    }
  }

  @Override
  public void onCompleted() {
    ended.complete(Status.OK);
    if (!closing) {
      lease.lost(Status.UNAVAILABLE.withDescription("the KeepAlive stream of resource '" + lease.resource()
          + "' ended unexpectedly"));
    }
  }

  /** Half-close: the server releases the lease and ends the stream; completes with how it ended. */
  CompletableFuture<Status> halfClose() {
    closing = true;
    try {
      requests.onCompleted();
    } catch (IllegalStateException alreadyGone) {
      ended.complete(Status.CANCELLED.withDescription("the KeepAlive stream was already gone"));
    }
    return ended;
  }

  /** Stops the renewals without releasing (the lease then runs out). */
  void cancel() {
    closing = true;
    requests.cancel("the holder stopped keeping the lease alive", null);
  }
}
