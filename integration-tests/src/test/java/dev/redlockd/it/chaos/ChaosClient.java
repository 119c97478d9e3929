package dev.redlockd.it.chaos;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * One contending client: a thread that takes a lock on a random resource, works on the
 * protected resource while it believes it holds the lock, lets go, and starts over until the
 * run stops. Subclasses differ in how they take and keep the lock.
 */
abstract class ChaosClient implements Runnable {
  /** What every client of a run shares. */
  record Shared(History history, Map<String, ProtectedResource> resources, List<String> names, OpenStreams streams,
      AtomicLong leaseIds, Duration minTtl, Duration maxTtl, BooleanSupplier stopping) {}

  protected final String name;
  protected final ClientKind kind;
  protected final int replica;
  protected final Shared shared;
  protected final Random random;

  ChaosClient(String name, ClientKind kind, int replica, Shared shared, long seed) {
    this.name = name;
    this.kind = kind;
    this.replica = replica;
    this.shared = shared;
    this.random = new Random(seed);
  }

  @Override
  public final void run() {
    while (!stopping()) {
      try {
        round();
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        shared.history().clientError(name + ": " + e);
        pause(200);
      }
      pause(10 + random.nextInt(90));
    }
  }

  /** One take-work-release cycle on one resource. */
  abstract void round() throws InterruptedException;

  protected boolean stopping() {
    return shared.stopping().getAsBoolean();
  }

  protected String pickResource() {
    return shared.names().get(random.nextInt(shared.names().size()));
  }

  protected Duration pickTtl() {
    long min = shared.minTtl().toMillis();
    long max = shared.maxTtl().toMillis();
    return Duration.ofMillis(min + (long) (random.nextDouble() * (max - min)));
  }

  protected Duration millisBetween(int low, int high) {
    return Duration.ofMillis(low + random.nextInt(high - low + 1));
  }

  protected long nextLeaseId() {
    return shared.leaseIds().incrementAndGet();
  }

  protected ProtectedResource store(String resource) {
    return shared.resources().get(resource);
  }

  /**
   * A failed Acquire: recorded, and a short back-off when the service is unreachable so that
   * clients of a dead replica do not spin.
   */
  protected void acquireFailed(String resource, long sendNanos, Status status) {
    Status.Code code = status.getCode();
    shared.history().acquire(AcquireCall.failed(resource, kind, replica, sendNanos, System.nanoTime(), code));
    if (!ContractCodes.ACQUIRE.contains(code)) {
      shared.history().clientError(name + ": Acquire ended with " + code + " (" + status.getDescription()
          + (status.getCause() == null ? "" : ", cause " + status.getCause()) + "), which the contract does not name");
    }
    if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
      pause(100 + random.nextInt(200));
    }
  }

  protected static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** {@code nanoTime() + remaining}: read in this order it is never later than the client's own deadline. */
  protected static long deadlineOf(dev.redlockd.client.Lease lease) {
    long now = System.nanoTime();
    Duration remaining = lease.remaining();
    return remaining.isZero() ? Long.MIN_VALUE : now + remaining.toNanos();
  }

  static long nanos(com.google.protobuf.Duration d) {
    return TimeUnit.SECONDS.toNanos(d.getSeconds()) + d.getNanos();
  }
}
