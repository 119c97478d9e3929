package dev.redlockd.client;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.CompletableFuture;

/** A unary gRPC call as a CompletableFuture; cancelling the future cancels the call. */
final class UnaryCall<Req, Resp> extends CompletableFuture<Resp> implements ClientResponseObserver<Req, Resp> {
  private volatile ClientCallStreamObserver<Req> call;

  @Override
  public void beforeStart(ClientCallStreamObserver<Req> requestStream) {
    call = requestStream;
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    ClientCallStreamObserver<Req> c = call;
    if (c != null) {
      c.cancel("the caller cancelled", null);
    }
    return super.cancel(mayInterruptIfRunning);
  }

  @Override
  public void onNext(Resp value) {
    complete(value);
  }

  @Override
  public void onError(Throwable t) {
    completeExceptionally(t);
  }

  @Override
  public void onCompleted() {}
}
