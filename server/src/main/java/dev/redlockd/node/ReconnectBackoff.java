package dev.redlockd.node;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

/**
 * How long a connection waits before trying a node that failed it again. The first attempt
 * after a connection that worked goes at once (a node restarting or a dropped socket is the
 * common case); each attempt that fails before the node answers doubles the wait, up to a
 * second, and every wait is drawn between half and all of that (jitter), so that the loops'
 * connections, and the replicas of a cluster, do not come back at a recovering node in step.
 */
final class ReconnectBackoff {
  static final long FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(25);
  static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final DoubleSupplier random; // uniform over [0, 1]
  private int failures;

  ReconnectBackoff() {
    this(() -> ThreadLocalRandom.current().nextDouble());
  }

  ReconnectBackoff(DoubleSupplier random) {
    this.random = random;
  }

  /** The node answered: the next failure starts from the beginning again. */
  void reset() {
    failures = 0;
  }

  /** An attempt failed before the node answered; how long to wait before the next one. */
  long failedNanos() {
    failures = Math.min(failures + 1, 31);
    long ceiling = Math.min(MAX_NANOS, FIRST_NANOS << Math.min(failures - 1, 20));
    long half = ceiling / 2;
    return half + (long) (random.getAsDouble() * (ceiling - half));
  }
}
