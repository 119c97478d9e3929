package dev.redlockd.client;

import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The client end of a lease's KeepAlive streams: moves the lease's local deadline after each
 * renewal, reopens a stream that broke (naming the lease by its token again, on any replica),
 * carries every change of the lease's ttl, and reports the lease lost when the stream ends for
 * good without the holder having asked.
 */
final class LeaseKeeper extends RenewalStream<KeepAliveRequest, KeepAliveResponse> {
  /** A ttl change: done when an answer echoing {@code sequence} (or a later one) says HELD. */
  private record TtlChange(long sequence, CompletableFuture<Void> shown) {}

  /** What the server subtracts from a ttl for clock drift: 1 % of it plus 2 ms (lock.proto). */
  private static final long DRIFT_FLOOR_NANOS = 2_000_000L;

  private final Lease lease;
  private final LockServiceGrpc.LockServiceStub stub;
  private final String token;
  private Duration ttl; // guarded by this
  private final List<TtlChange> changes = new ArrayList<>(); // guarded by this

  LeaseKeeper(Lease lease, LockClient client, String token, Duration ttl) {
    super(client::nanoTime, client.scheduler(), client::keptStreamMoving, client.answerTimes());
    this.lease = lease;
    this.stub = client.streamingStub();
    this.token = token;
    this.ttl = ttl;
  }

  synchronized void start() {
    startRequests(ttl);
  }

  @Override
  void open(ClientResponseObserver<KeepAliveRequest, KeepAliveResponse> observer) {
    stub.keepAlive(observer);
  }

  @Override
  KeepAliveRequest request(long sequence, boolean first) {
    return KeepAliveRequest.newBuilder()
        .setResource(lease.resource())
        .setPermit(lease.permit())
        .setToken(token)
        .setTtl(ProtoTime.toProto(ttl))
        .setSequence(sequence)
        .build();
  }

  /**
   * Rule 15: the lease's ttl becomes {@code newTtl} through this stream. A request with the new
   * ttl goes out now; answers to earlier requests are ignored from now on; a shorter ttl cuts
   * the deadline at once to what that renewal may leave on the nodes (send time + ttl - drift),
   * since the nodes may hold the key no longer than that once the server has it. The future
   * completes when an answer to that request (or a later one) says HELD.
   */
  CompletableFuture<Void> changeTtl(Duration newTtl) {
    CompletableFuture<Void> shown = new CompletableFuture<>();
    synchronized (this) {
      if (closing()) {
        shown.completeExceptionally(new LeaseLostException(Status.FAILED_PRECONDITION.withDescription(
            lease.description() + " is no longer kept alive")));
        return shown;
      }
      boolean shorter = newTtl.compareTo(ttl) < 0;
      ttl = newTtl;
      lease.ttlChanged(newTtl);
      if (shorter) {
        // Before the request goes out, from a time no later than its send: the cut is safe.
        long latest = nanoTime() + newTtl.toNanos() - newTtl.toNanos() / 100 - DRIFT_FLOOR_NANOS;
        cutDeadlineLocked(latest);
        lease.cut(latest);
      }
      changes.add(new TtlChange(sendChangeLocked(newTtl), shown));
    }
    return shown;
  }

  @Override
  void deadlineMoved(long deadlineNanos) {
    lease.renewed(deadlineNanos);
  }

  @Override
  void answered(KeepAliveResponse response, long deadlineNanos) {
    if (response.getState() != LeaseState.LEASE_STATE_HELD) {
      return;
    }
    List<CompletableFuture<Void>> done = new ArrayList<>();
    synchronized (this) {
      changes.removeIf(change -> {
        if (change.sequence() <= response.getSequence()) {
          done.add(change.shown());
          return true;
        }
        return false;
      });
    }
    done.forEach(f -> f.complete(null));
  }

  @Override
  boolean worthResuming() {
    return lease.isOpen();
  }

  @Override
  void giveBackWithoutStream() {
    lease.releaseInBackground();
  }

  @Override
  void endedUnexpectedly(Status status) {
    lease.lost(status);
    failChanges(new LeaseLostException(status));
  }

  /** Every ttl change still waiting for its answer fails with {@code failure}. */
  void failChanges(RuntimeException failure) {
    List<TtlChange> pending;
    synchronized (this) {
      pending = List.copyOf(changes);
      changes.clear();
    }
    pending.forEach(change -> change.shown().completeExceptionally(failure));
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
