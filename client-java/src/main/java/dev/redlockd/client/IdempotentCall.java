package dev.redlockd.client;

import io.grpc.Status;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

/**
 * One unary call that may be sent again without harm (Release, Extend, Leader: each names its
 * lease by token, or only reads), with its retries: UNAVAILABLE is retried under the
 * {@link RetryPolicy} until the call's deadline (the call timeout, from the first attempt), the
 * channel's reconnect backoff reset before each retry, so that the retry reaches a replica that
 * is up (one back a moment ago, or another). A server's pushback replaces the backoff, and
 * "do not retry" ends it. Each attempt is held to {@link LockClient#attemptTimeout()}; one that
 * ends so (a replica gone silent, or only slow) is retried at once while the deadline is ahead.
 * (Acquire has its own: {@link PendingAcquire}.)
 */
final class IdempotentCall<S extends AbstractStub<S>, Resp> {
  private final LockClient client;
  private final S stub;
  private final BiConsumer<S, StreamObserver<Resp>> method;
  private final BooleanSupplier stillWorthIt;
  private final long deadlineNanos;
  final CompletableFuture<Resp> result = new CompletableFuture<>();
  private volatile UnaryCall<Object, Resp> inFlight;

  private IdempotentCall(LockClient client, S stub, BiConsumer<S, StreamObserver<Resp>> method,
      BooleanSupplier stillWorthIt) {
    this.client = client;
    this.stub = stub;
    this.method = method;
    this.stillWorthIt = stillWorthIt;
    this.deadlineNanos = client.nanoTime() + client.callTimeout().toNanos();
    result.whenComplete((r, failure) -> {
      UnaryCall<Object, Resp> call = inFlight;
      if (result.isCancelled() && call != null) {
        call.cancel(false);
      }
    });
  }

  /**
   * Sends the call; the future completes with its answer, or fails with a
   * {@link LockServiceException}. Cancelling it cancels the attempt under way.
   */
  static <S extends AbstractStub<S>, Resp> CompletableFuture<Resp> start(LockClient client, S stub,
      BiConsumer<S, StreamObserver<Resp>> method, BooleanSupplier stillWorthIt) {
    IdempotentCall<S, Resp> call = new IdempotentCall<>(client, stub, method, stillWorthIt);
    call.attempt(1);
    return call.result;
  }

  private void attempt(int attempt) {
    if (result.isDone()) {
      return;
    }
    UnaryCall<Object, Resp> call = new UnaryCall<>();
    inFlight = call;
    method.accept(stub.withDeadlineAfter(client.attemptTimeout().toNanos(), TimeUnit.NANOSECONDS), call);
    if (result.isCancelled()) {
      call.cancel(false);
    }
    call.whenComplete((response, failure) -> {
      if (failure == null) {
        result.complete(response);
        return;
      }
      Status status = CallStatus.of(failure);
      if (status.getCode() == Status.Code.DEADLINE_EXCEEDED && client.nanoTime() < deadlineNanos
          && !result.isDone() && client.retryPolicy().maxAttempts() > 1 && stillWorthIt.getAsBoolean()) {
        // No answer within the attempt's timeout, with the call's deadline ahead: its replica
        // may be silent. round_robin puts the retry on the next one, at once.
        client.retryAfter(() -> attempt(attempt + 1), 0);
        return;
      }
      long pushback = Pushback.of(failure);
      long wait = client.retryWaitNanos(attempt, pushback);
      if (status.getCode() == Status.Code.UNAVAILABLE && pushback != Pushback.STOP && !result.isDone()
          && client.retryPolicy().retriesUnavailable(client.nanoTime() + wait, deadlineNanos)
          && stillWorthIt.getAsBoolean()) {
        client.retryAfter(() -> attempt(attempt + 1), wait);
        return;
      }
      result.completeExceptionally(LockServiceException.of(status, failure));
    });
  }
}
