package dev.redlockd.testing;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A test's own gRPC call retried on UNAVAILABLE for up to 5 s, as every client retries it: a
 * round that heard from fewer than a quorum within the node timeout (which a machine short of
 * CPU causes) is to be tried again, not taken for the answer the test is about.
 */
public final class RetriedWhileUnavailable {
  private RetriedWhileUnavailable() {}

  public static <T> T call(Supplier<T> call) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (true) {
      try {
        return call.get();
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() - deadline > 0) {
          throw e;
        }
      }
    }
  }
}
