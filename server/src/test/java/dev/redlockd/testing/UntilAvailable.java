package dev.redlockd.testing;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * A raw stub's call retried on {@code UNAVAILABLE}, as every client retries it (conformance rule
 * 2), for tests whose claim is not the first call's fate: a server just started answers its first
 * calls from cold code, and a round whose node calls outlast the node timeout then says
 * {@code UNAVAILABLE}, which a client takes as "try again"; a round that heard from fewer than a
 * quorum within the node timeout (which a machine short of CPU causes) is likewise to be tried
 * again, not taken for the answer the test is about.
 */
public final class UntilAvailable {
  private static final Duration PAUSE = Duration.ofMillis(50);
  /** How long a call is retried where the test has no bound of its own. */
  private static final Duration WITHIN = Duration.ofSeconds(5);

  private UntilAvailable() {}

  /** {@code call}'s result, retried on UNAVAILABLE for up to 5 s; its last failure after that. */
  public static <T> T call(Supplier<T> call) {
    return call(WITHIN, call);
  }

  /** {@code call}'s result, retried on UNAVAILABLE until {@code within} has passed; its last failure after that. */
  public static <T> T call(Duration within, Supplier<T> call) {
    long end = System.nanoTime() + within.toNanos();
    while (true) {
      try {
        return call.get();
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() - end > 0) {
          throw e;
        }
      }
      try {
        Thread.sleep(PAUSE.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }
}
