package dev.redlockd.client;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The client end of a candidacy's Campaign streams: a candidate until the first answer, then
 * the streams behind a {@link Leadership}. Requests go out every ttl/4 while waiting too, so
 * that the answer that makes it leader echoes a recent send time (a candidate that waited an
 * hour must not date its leadership from an hour ago).
 *
 * <p>Every request carries the candidate's own token (made here, as a lease's), so a stream
 * that broke is reopened as the same candidacy: a leader asks for its leadership back
 * ({@code resume}) and leads on with the same term; a candidate still waiting campaigns again
 * with the same token, and leads at once if the lost stream had made it leader.
 */
final class Campaigner extends RenewalStream<CampaignRequest, CampaignResponse> {
  private record Proclaimed(String value, CompletableFuture<Void> shown) {}

  private final LockClient client;
  private final String election;
  private final Duration ttl;
  private final String token = LockTokens.newToken();
  private ElectionServiceGrpc.ElectionServiceStub stub; // guarded by this
  final CompletableFuture<Leadership> result = new CompletableFuture<>();
  private CampaignRequest named; // guarded by this
  private Leadership leadership; // guarded by this
  private final List<Proclaimed> proclaimed = new ArrayList<>(); // guarded by this

  Campaigner(LockClient client, String election, String value, Duration ttl) {
    super(client::nanoTime, client.scheduler(), client::keptStreamMoving, client.answerTimes());
    this.client = client;
    this.election = election;
    this.ttl = ttl;
    this.named = CampaignRequest.newBuilder()
        .setElection(election)
        .setValue(value)
        .setTtl(ProtoTime.toProto(ttl))
        .build();
  }

  /** Opens the stream; a caller that gives up on {@code result} (cancel, wait over) withdraws. */
  void start(ElectionServiceGrpc.ElectionServiceStub elections, Duration wait) {
    synchronized (this) {
      stub = elections;
      startRequests(ttl);
    }
    if (wait != null) {
      client.scheduler().schedule(this::waitOver, wait.toNanos(), TimeUnit.NANOSECONDS);
    }
    result.whenComplete((leading, failure) -> {
      if (result.isCancelled()) {
        halfClose();
      }
    });
  }

  private synchronized void waitOver() {
    if (leadership == null && !result.isDone()) {
      // A grant on its way is resigned by the same half-close: the server sees the input end.
      halfClose();
      result.completeExceptionally(new LockNotAcquiredException(Status.ABORTED.withDescription(
          "not leading election '" + election + "' within the wait"), null));
    }
  }

  @Override
  void open(ClientResponseObserver<CampaignRequest, CampaignResponse> observer) {
    stub.campaign(observer);
  }

  @Override
  CampaignRequest request(long sequence, boolean first) {
    // resume: the first request of a stream reopened by a leader (a candidate still waiting
    // asks again without it, and leads at once if its token already leads).
    return named.toBuilder().setSequence(sequence).setToken(token).setResume(first && leadership != null).build();
  }

  /** A leader awaits an answer to each request; a candidate hears nothing until it leads. */
  @Override
  boolean awaitsAnswers() {
    return leadership != null;
  }

  @Override
  boolean worthResuming() {
    return leadership != null ? leadership.isOpen() : !result.isDone();
  }

  @Override
  void deadlineMoved(long deadlineNanos) {
    if (leadership != null) {
      leadership.renewed(deadlineNanos);
    }
  }

  /** Sends the new value; the future completes when an answer shows it. */
  CompletableFuture<Void> proclaim(String value) {
    CompletableFuture<Void> shown = new CompletableFuture<>();
    synchronized (this) {
      named = named.toBuilder().setValue(value).build();
      proclaimed.add(new Proclaimed(value, shown));
    }
    sendNow();
    return shown;
  }

  @Override
  void answered(CampaignResponse response, long deadlineNanos) {
    Leadership leading;
    boolean first = false;
    synchronized (this) {
      if (leadership == null) {
        if (closing() || result.isDone() || deadlineNanos == SentRequests.UNKNOWN) {
          return;
        }
        leadership = new Leadership(client, election, response.getTerm(), response.getValue(), ttl, deadlineNanos,
            this);
        first = true;
      }
      leading = leadership;
      leading.shows(response.getValue(), response.getTerm());
      completeProclaimedUpTo(response.getValue());
    }
    // Outside this object's lock: completing the result runs the caller's continuations.
    if (first && !result.complete(leading)) {
      leading.abandon(); // the caller cancelled meanwhile, and that half-closed the stream
    }
  }

  /** Every proclaim up to the last one of this value is settled: later answers show later values. */
  private void completeProclaimedUpTo(String value) {
    int last = -1;
    for (int i = 0; i < proclaimed.size(); i++) {
      if (proclaimed.get(i).value().equals(value)) {
        last = i;
      }
    }
    for (int i = 0; i <= last; i++) {
      proclaimed.remove(0).shown().complete(null);
    }
  }

  @Override
  void endedUnexpectedly(Status status) {
    Leadership leading;
    List<Proclaimed> pending;
    synchronized (this) {
      leading = leadership;
      pending = List.copyOf(proclaimed);
      proclaimed.clear();
    }
    if (leading == null) {
      result.completeExceptionally(LockServiceException.of(status, null));
      return;
    }
    leading.lost(status);
    pending.forEach(p -> p.shown().completeExceptionally(new LeaseLostException(status)));
  }

  @Override
  Status unexpectedOk() {
    return Status.UNAVAILABLE.withDescription("the Campaign stream of election '" + election + "' ended unexpectedly");
  }

  @Override
  Duration validityOf(CampaignResponse response) {
    return ProtoTime.fromProto(response.getValidity());
  }

  @Override
  long sequenceOf(CampaignResponse response) {
    return response.getSequence();
  }
}
