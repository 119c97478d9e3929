package dev.redlockd.it.election;

import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.Leadership;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/** An Observe stream and everything it said, in order. */
final class Observer implements StreamObserver<ObserveResponse>, AutoCloseable {
  private final Context.CancellableContext context = Context.current().withCancellation();
  private final List<Optional<Leadership>> states = new ArrayList<>();

  Observer(Channel channel, String election) {
    context.run(() -> ElectionServiceGrpc.newStub(channel)
        .observe(ObserveRequest.newBuilder().setElection(election).build(), this));
  }

  @Override
  public synchronized void onNext(ObserveResponse response) {
    states.add(response.hasLeader() ? Optional.of(response.getLeader()) : Optional.empty());
    notifyAll();
  }

  @Override
  public synchronized void onError(Throwable t) {
    notifyAll();
  }

  @Override
  public void onCompleted() {}

  synchronized List<Optional<Leadership>> states() {
    return List.copyOf(states);
  }

  /** Waits until the latest state matches; false if it did not within {@code timeout}. */
  synchronized boolean awaitLatest(Predicate<Optional<Leadership>> wanted, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (states.isEmpty() || !wanted.test(states.get(states.size() - 1))) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return true;
  }

  boolean awaitLeader(long term, Duration timeout) throws InterruptedException {
    return awaitLatest(s -> s.isPresent() && s.get().getTerm() == term, timeout);
  }

  boolean awaitVacant(Duration timeout) throws InterruptedException {
    return awaitLatest(Optional::isEmpty, timeout);
  }

  @Override
  public void close() {
    context.cancel(null);
  }
}
