package dev.redlockd.it.chaos;

import dev.redlockd.client.LeaseLostException;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockNotAcquiredException;
import dev.redlockd.client.LockOptions;
import dev.redlockd.client.LockServiceException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A holder that leaves everything to {@code LockClient.withLock}: the work writes while the
 * lease is valid, for 0.2 to 1.5 ttls, and is interrupted by the client when the lease is lost.
 */
final class WithLockClient extends ChaosClient {
  private final LockClient locks;

  WithLockClient(String name, int replica, LockClient locks, Shared shared, long seed) {
    super(name, ClientKind.WITH_LOCK, replica, shared, seed);
    this.locks = locks;
  }

  @Override
  void round() throws InterruptedException {
    String resource = pickResource();
    Duration ttl = pickTtl();
    double holdTtls = 0.2 + 1.3 * random.nextDouble();
    long sent = System.nanoTime();
    boolean[] granted = {false};
    try {
      locks.withLock(resource, LockOptions.ttl(ttl).waitUpTo(millisBetween(200, 2000)), lease -> {
        long start = System.nanoTime();
        granted[0] = true;
        long leaseId = nextLeaseId();
        shared.history().acquire(AcquireCall.granted(resource, kind, replica, sent, start, lease.fencingToken(),
            leaseId));
        shared.streams().opened(leaseId, replica, resource);
        long holdUntil = start + (long) (ttl.toNanos() * holdTtls);
        ProtectedResource store = store(resource);
        long deadline = Long.MIN_VALUE;
        try {
          while (true) {
            long now = System.nanoTime();
            long current = deadlineOf(lease);
            if (current == Long.MIN_VALUE) {
              break;
            }
            deadline = current;
            store.write(leaseId, lease.fencingToken(), deadline);
            if (now >= holdUntil || stopping()) {
              break;
            }
            // Interrupted by withLock when the lease is lost.
            TimeUnit.NANOSECONDS.sleep(Math.min(TimeUnit.MILLISECONDS.toNanos(20 + random.nextInt(40)),
                holdUntil - now));
          }
        } finally {
          long end = System.nanoTime();
          shared.streams().closed(leaseId);
          if (deadline == Long.MIN_VALUE) {
            shared.history().expiredOnArrival(kind);
          } else {
            shared.history().section(new CriticalSection(resource, name, kind, leaseId, lease.fencingToken(), start,
                end, deadline));
          }
        }
        return null;
      });
    } catch (LeaseLostException e) {
      shared.history().leaseLost(kind, e.status().getCode());
    } catch (LockNotAcquiredException e) {
      acquireFailed(resource, sent, io.grpc.Status.ABORTED);
    } catch (LockServiceException e) {
      if (!granted[0]) {
        acquireFailed(resource, sent, e.status());
      } else {
        shared.history().clientError(name + ": withLock failed after the grant: " + e);
      }
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      shared.history().clientError(name + ": withLock threw " + e);
    }
  }
}
