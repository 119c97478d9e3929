package dev.redlockd.client;

import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The client end of a KeepAlive stream: moves the lease's local deadline after each renewal
 * and reports the lease lost when the stream ends without the holder having asked.
 *
 * <p>The server counts a renewal's validity from when it finished; its answer may then spend
 * any time on the way (a congested link, a long GC pause here). So the deadline is counted
 * from the send time of the request whose sequence the answer echoes: that renewal began after
 * the request arrived, so the deadline is never later than the server's. To keep that send
 * time recent, a request goes out every ttl/4; each renews at once, and the server's own
 * ttl/3 timer, restarted by each renewal, then never fires first, so the renewals are not
 * doubled.
 */
final class LeaseKeeper implements ClientResponseObserver<KeepAliveRequest, KeepAliveResponse> {
  private final Lease lease;
  private final LongSupplier nanoClock;
  private final ScheduledExecutorService scheduler;
  private final CompletableFuture<Status> ended = new CompletableFuture<>();
  private final SentRequests sent = new SentRequests();
  private volatile ClientCallStreamObserver<KeepAliveRequest> requests;
  private volatile boolean closing;
  private volatile long deadlineNanos = Long.MIN_VALUE;
  private KeepAliveRequest named; // guarded by this
  private long nextSequence = 1; // guarded by this
  private ScheduledFuture<?> nextRequest; // guarded by this

  LeaseKeeper(Lease lease, LongSupplier nanoClock, ScheduledExecutorService scheduler) {
    this.lease = lease;
    this.nanoClock = nanoClock;
    this.scheduler = scheduler;
  }

  void start(LockServiceGrpc.LockServiceStub stub, String token, Duration ttl) {
    stub.keepAlive(this);
    synchronized (this) {
      named = KeepAliveRequest.newBuilder()
          .setResource(lease.resource())
          .setToken(token)
          .setTtl(ProtoTime.toProto(ttl))
          .build();
      sendLocked();
      long period = Math.max(1, ttl.toNanos() / 4);
      nextRequest = scheduler.scheduleAtFixedRate(this::sendNext, period, period, TimeUnit.NANOSECONDS);
    }
  }

  private synchronized void sendNext() {
    if (!closing) {
      sendLocked();
    }
  }

  /** The stream's requests are sent one at a time, under this lock. */
  private void sendLocked() {
    long sequence = nextSequence++;
    sent.record(sequence, nanoClock.getAsLong());
    try {
      requests.onNext(named.toBuilder().setSequence(sequence).build());
    } catch (IllegalStateException streamAlreadyClosed) {
      // The stream ended under us: onError/onCompleted says how.
    }
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<KeepAliveRequest> requestStream) {
    requests = requestStream;
  }

  @Override
  public void onNext(KeepAliveResponse response) {
    long sentNanos = sent.sentAt(response.getSequence());
    if (sentNanos == SentRequests.UNKNOWN) {
      return; // not an answer this client can date: it does not move the deadline
    }
    long candidate = sentNanos + ProtoTime.fromProto(response.getLease().getValidity()).toNanos();
    // An answer reporting an earlier renewal (or jeopardy) may arrive after a later one.
    if (candidate > deadlineNanos) {
      deadlineNanos = candidate;
      lease.renewed(candidate);
    }
  }

  @Override
  public void onError(Throwable t) {
    stopRequests();
    Status status = CallStatus.of(t);
    ended.complete(status);
    if (!closing) {
      lease.lost(status);
    }
  }

  @Override
  public void onCompleted() {
    stopRequests();
    ended.complete(Status.OK);
    if (!closing) {
      lease.lost(Status.UNAVAILABLE.withDescription("the KeepAlive stream of resource '" + lease.resource()
          + "' ended unexpectedly"));
    }
  }

  /** Half-close: the server releases the lease and ends the stream; completes with how it ended. */
  CompletableFuture<Status> halfClose() {
    synchronized (this) {
      closing = true;
      stopRequests();
      try {
        requests.onCompleted();
      } catch (IllegalStateException alreadyGone) {
        ended.complete(Status.CANCELLED.withDescription("the KeepAlive stream was already gone"));
      }
    }
    return ended;
  }

  /** Stops the renewals without releasing (the lease then runs out). */
  void cancel() {
    synchronized (this) {
      closing = true;
      stopRequests();
    }
    requests.cancel("the holder stopped keeping the lease alive", null);
  }

  private synchronized void stopRequests() {
    if (nextRequest != null) {
      nextRequest.cancel(false);
    }
  }
}
