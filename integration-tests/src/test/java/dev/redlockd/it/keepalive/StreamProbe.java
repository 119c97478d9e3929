package dev.redlockd.it.keepalive;

import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The client end of one KeepAlive stream, recording what the server sends and how it ends. */
public final class StreamProbe implements ClientResponseObserver<KeepAliveRequest, KeepAliveResponse> {
  final BlockingQueue<KeepAliveResponse> responses = new LinkedBlockingQueue<>();
  public final CompletableFuture<Status> end = new CompletableFuture<>();
  /** When the stream ended ({@link System#nanoTime()}), once {@link #end} is done. */
  public volatile long endedAt;
  private volatile ClientCallStreamObserver<KeepAliveRequest> requests;

  public static StreamProbe open(LockServiceGrpc.LockServiceStub stub) {
    StreamProbe probe = new StreamProbe();
    stub.keepAlive(probe);
    return probe;
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<KeepAliveRequest> requestStream) {
    this.requests = requestStream;
  }

  public void send(String resource, String token, Duration ttl) {
    send(resource, token, ttl, 0);
  }

  public void send(String resource, String token, Duration ttl, long sequence) {
    requests.onNext(KeepAliveRequest.newBuilder()
        .setResource(resource)
        .setToken(token)
        .setTtl(com.google.protobuf.Duration.newBuilder()
            .setSeconds(ttl.getSeconds()).setNanos(ttl.getNano()).build())
        .setSequence(sequence)
        .build());
  }

  /** Any request as built by the caller (a permit's, for one). */
  public void send(KeepAliveRequest request) {
    requests.onNext(request);
  }

  public void halfClose() {
    requests.onCompleted();
  }

  public void cancel() {
    requests.cancel("test cancels the stream", null);
  }

  /** The next response, or fails when none comes within the timeout. */
  public KeepAliveResponse next(Duration timeout) throws InterruptedException {
    KeepAliveResponse r = responses.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (r == null) {
      throw new AssertionError("no KeepAlive response within " + timeout.toMillis() + "ms; ended: "
          + (end.isDone() ? end.join() : "no"));
    }
    return r;
  }

  public Status awaitEnd(Duration timeout) throws Exception {
    return end.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void onNext(KeepAliveResponse value) {
    responses.add(value);
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
