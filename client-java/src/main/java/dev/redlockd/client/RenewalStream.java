package dev.redlockd.client;

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
 * The client end of a stream that keeps a grant alive (KeepAlive, Campaign): a request every
 * ttl/4 with a rising sequence, answers dated by the send time of the request they echo, and
 * the end of the stream told apart from one the holder asked for.
 *
 * <p>The server counts a renewal's validity from when it finished; its answer may then spend
 * any time on the way (a congested link, a long GC pause here). So the deadline is counted
 * from the send time of the request whose sequence the answer echoes: that renewal began after
 * the request arrived, so the deadline is never later than the server's. To keep that send
 * time recent, a request goes out every ttl/4; each renews at once, and the server's own
 * ttl/3 timer, restarted by each renewal, then never fires first, so the renewals are not
 * doubled.
 */
abstract class RenewalStream<Req, Resp> implements ClientResponseObserver<Req, Resp> {
  private final LongSupplier nanoClock;
  private final ScheduledExecutorService scheduler;
  private final CompletableFuture<Status> ended = new CompletableFuture<>();
  private final SentRequests sent = new SentRequests();
  private volatile ClientCallStreamObserver<Req> requests;
  private volatile boolean closing;
  private volatile long deadlineNanos = Long.MIN_VALUE;
  private long nextSequence = 1; // guarded by this
  private ScheduledFuture<?> nextRequest; // guarded by this

  RenewalStream(LongSupplier nanoClock, ScheduledExecutorService scheduler) {
    this.nanoClock = nanoClock;
    this.scheduler = scheduler;
  }

  /** The next request to send, carrying {@code sequence}. Called under this object's lock. */
  abstract Req request(long sequence);

  /** An answer; {@code deadlineNanos} is the deadline it moved forward to, or {@link SentRequests#UNKNOWN}. */
  abstract void answered(Resp response, long deadlineNanos);

  /** The stream ended without the holder asking for it. */
  abstract void endedUnexpectedly(Status status);

  /** The stream ended with OK without the holder asking for it: how to report that. */
  abstract Status unexpectedOk();

  /** The validity an answer carries. */
  abstract Duration validityOf(Resp response);

  /** The sequence an answer echoes. */
  abstract long sequenceOf(Resp response);

  /** Sends the first request at once and one every ttl/4 after it. */
  final synchronized void startRequests(Duration ttl) {
    sendLocked();
    long period = Math.max(1, ttl.toNanos() / 4);
    nextRequest = scheduler.scheduleAtFixedRate(this::sendNext, period, period, TimeUnit.NANOSECONDS);
  }

  /** Sends one more request now (a changed value, say), in sequence with the periodic ones. */
  final synchronized void sendNow() {
    if (!closing) {
      sendLocked();
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
      requests.onNext(request(sequence));
    } catch (IllegalStateException streamAlreadyClosed) {
      // The stream ended under us: onError/onCompleted says how.
    }
  }

  @Override
  public final void beforeStart(ClientCallStreamObserver<Req> requestStream) {
    requests = requestStream;
  }

  @Override
  public final void onNext(Resp response) {
    long sentNanos = sent.sentAt(sequenceOf(response));
    long moved = SentRequests.UNKNOWN;
    if (sentNanos != SentRequests.UNKNOWN) {
      long candidate = sentNanos + validityOf(response).toNanos();
      // An answer reporting an earlier renewal (or jeopardy) may arrive after a later one.
      if (candidate > deadlineNanos) {
        deadlineNanos = candidate;
        moved = candidate;
      }
    }
    answered(response, moved);
  }

  @Override
  public final void onError(Throwable t) {
    stopRequests();
    Status status = CallStatus.of(t);
    ended.complete(status);
    if (!closing) {
      endedUnexpectedly(status);
    }
  }

  @Override
  public final void onCompleted() {
    stopRequests();
    ended.complete(Status.OK);
    if (!closing) {
      endedUnexpectedly(unexpectedOk());
    }
  }

  final boolean closing() {
    return closing;
  }

  /** Half-close: the server gives the grant back and ends the stream; completes with how it ended. */
  final CompletableFuture<Status> halfClose() {
    synchronized (this) {
      closing = true;
      stopRequests();
      try {
        requests.onCompleted();
      } catch (IllegalStateException alreadyGone) {
        ended.complete(Status.CANCELLED.withDescription("the stream was already gone"));
      }
    }
    return ended;
  }

  /** Stops the renewals without giving the grant back (it then runs out). */
  final void cancel(String why) {
    synchronized (this) {
      closing = true;
      stopRequests();
    }
    requests.cancel(why, null);
  }

  private synchronized void stopRequests() {
    if (nextRequest != null) {
      nextRequest.cancel(false);
    }
  }
}
