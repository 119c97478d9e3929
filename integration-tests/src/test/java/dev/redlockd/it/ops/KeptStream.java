package dev.redlockd.it.ops;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The client end of one KeepAlive stream: its first response and how it ended. */
final class KeptStream implements ClientResponseObserver<KeepAliveRequest, KeepAliveResponse> {
  final CompletableFuture<KeepAliveResponse> first = new CompletableFuture<>();
  final CompletableFuture<Status> end = new CompletableFuture<>();
  private volatile ClientCallStreamObserver<KeepAliveRequest> requests;

  /** Opens a stream that keeps this lease and waits for the server's first answer. */
  static KeptStream keep(LockServiceGrpc.LockServiceStub stub, String resource, String token, Duration ttl)
      throws Exception {
    KeptStream stream = new KeptStream();
    stub.keepAlive(stream);
    stream.requests.onNext(KeepAliveRequest.newBuilder()
        .setResource(resource).setToken(token).setTtl(LiveServer.proto(ttl)).build());
    stream.first.get(10, TimeUnit.SECONDS);
    return stream;
  }

  void halfClose() {
    requests.onCompleted();
  }

  Status awaitEnd(Duration timeout) throws Exception {
    return end.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<KeepAliveRequest> requestStream) {
    this.requests = requestStream;
  }

  @Override
  public void onNext(KeepAliveResponse value) {
    first.complete(value);
  }

  @Override
  public void onError(Throwable t) {
    first.completeExceptionally(t);
    end.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    end.complete(Status.OK);
  }
}
