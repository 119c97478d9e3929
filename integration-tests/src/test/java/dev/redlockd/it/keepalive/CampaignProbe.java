package dev.redlockd.it.keepalive;

import static dev.redlockd.it.support.LiveServer.proto;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The client end of one Campaign stream, as {@link StreamProbe} is of a KeepAlive stream. */
final class CampaignProbe implements ClientResponseObserver<CampaignRequest, CampaignResponse> {
  final BlockingQueue<CampaignResponse> answers = new LinkedBlockingQueue<>();
  final CompletableFuture<Status> end = new CompletableFuture<>();
  /** When the stream ended ({@link System#nanoTime()}), once {@link #end} is done. */
  volatile long endedAt;
  private volatile ClientCallStreamObserver<CampaignRequest> requests;

  static CampaignProbe open(ElectionServiceGrpc.ElectionServiceStub stub) {
    CampaignProbe probe = new CampaignProbe();
    stub.campaign(probe);
    return probe;
  }

  /** A request for value {@code value} with ttl {@code ttl}, the candidate's {@code token} (or none) and {@code resume}. */
  void send(String election, String value, Duration ttl, String token, boolean resume, long sequence) {
    requests.onNext(CampaignRequest.newBuilder().setElection(election).setValue(value).setTtl(proto(ttl))
        .setToken(token).setResume(resume).setSequence(sequence).build());
  }

  CampaignResponse next(Duration timeout) throws InterruptedException {
    CampaignResponse answer = answers.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (answer == null) {
      throw new AssertionError("no Campaign answer within " + timeout.toMillis() + " ms; ended: "
          + (end.isDone() ? end.join() : "no"));
    }
    return answer;
  }

  void halfClose() {
    requests.onCompleted();
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<CampaignRequest> requestStream) {
    requests = requestStream;
  }

  @Override
  public void onNext(CampaignResponse response) {
    answers.add(response);
  }

  @Override
  public void onError(Throwable t) {
    endedAt = System.nanoTime();
    end.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    endedAt = System.nanoTime();
    end.complete(Status.OK);
  }
}
