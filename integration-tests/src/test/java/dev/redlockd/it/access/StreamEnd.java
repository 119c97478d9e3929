package dev.redlockd.it.access;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The responses a stream sent and the status it ended with, for tests that wait on either. */
final class StreamEnd<T> implements StreamObserver<T> {
  final LinkedBlockingQueue<T> responses = new LinkedBlockingQueue<>();
  final CompletableFuture<Status> end = new CompletableFuture<>();

  @Override
  public void onNext(T value) {
    responses.add(value);
  }

  @Override
  public void onError(Throwable t) {
    end.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    end.complete(Status.OK);
  }

  /** The next response within the timeout, or null. */
  T next(long seconds) throws InterruptedException {
    return responses.poll(seconds, TimeUnit.SECONDS);
  }

  Status status(long seconds) throws Exception {
    return end.get(seconds, TimeUnit.SECONDS);
  }
}
