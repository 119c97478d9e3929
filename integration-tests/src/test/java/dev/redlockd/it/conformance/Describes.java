package dev.redlockd.it.conformance;

import dev.redlockd.client.RetryPolicy;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A Describe on a runner's client's channel, retried as the client retries its own idempotent
 * calls (the Java client has no Describe of its own): UNAVAILABLE under the default
 * {@link RetryPolicy}'s backoff, past its attempts until the call timeout has passed since the
 * first, the channel's reconnect backoff reset before each retry.
 */
final class Describes {
  private Describes() {}

  /** Whether Describe says {@code resource} is held; the last failure if every attempt failed. */
  static boolean held(ManagedChannel channel, String resource, Duration callTimeout) throws InterruptedException {
    RetryPolicy policy = RetryPolicy.defaults();
    long deadline = System.nanoTime() + callTimeout.toNanos();
    for (int attempt = 1; ; attempt++) {
      try {
        return LockServiceGrpc.newBlockingStub(channel)
            .withDeadlineAfter(callTimeout.toNanos(), TimeUnit.NANOSECONDS)
            .describe(DescribeRequest.newBuilder().setResource(resource).build())
            .getHeld();
      } catch (StatusRuntimeException e) {
        long backoff = Math.min(policy.maxBackoff().toNanos(), policy.initialBackoff().toNanos() << (attempt - 1));
        boolean retry = e.getStatus().getCode() == Status.Code.UNAVAILABLE
            && (attempt < policy.maxAttempts() || System.nanoTime() + backoff < deadline);
        if (!retry) {
          throw e;
        }
        channel.resetConnectBackoff();
        TimeUnit.NANOSECONDS.sleep(backoff);
      }
    }
  }
}
