package dev.redlockd.client;

import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;

/**
 * The client end of a KeepAlive stream: moves the lease's local deadline after each renewal
 * and reports the lease lost when the stream ends without the holder having asked.
 */
final class LeaseKeeper extends RenewalStream<KeepAliveRequest, KeepAliveResponse> {
  private final Lease lease;
  private KeepAliveRequest named; // guarded by this

  LeaseKeeper(Lease lease, LongSupplier nanoClock, ScheduledExecutorService scheduler) {
    super(nanoClock, scheduler);
    this.lease = lease;
  }

  void start(LockServiceGrpc.LockServiceStub stub, String token, Duration ttl) {
    stub.keepAlive(this);
    synchronized (this) {
      named = KeepAliveRequest.newBuilder()
          .setResource(lease.resource())
          .setToken(token)
          .setTtl(ProtoTime.toProto(ttl))
          .build();
      startRequests(ttl);
    }
  }

  @Override
  KeepAliveRequest request(long sequence) {
    return named.toBuilder().setSequence(sequence).build();
  }

  @Override
  void answered(KeepAliveResponse response, long deadlineNanos) {
    if (deadlineNanos != SentRequests.UNKNOWN) {
      lease.renewed(deadlineNanos);
    }
  }

  @Override
  void endedUnexpectedly(Status status) {
    lease.lost(status);
  }

  @Override
  Status unexpectedOk() {
    return Status.UNAVAILABLE.withDescription("the KeepAlive stream of resource '" + lease.resource()
        + "' ended unexpectedly");
  }

  @Override
  Duration validityOf(KeepAliveResponse response) {
    return ProtoTime.fromProto(response.getLease().getValidity());
  }

  @Override
  long sequenceOf(KeepAliveResponse response) {
    return response.getSequence();
  }

  /** Stops the renewals without releasing (the lease then runs out). */
  void cancel() {
    cancel("the holder stopped keeping the lease alive");
  }
}
