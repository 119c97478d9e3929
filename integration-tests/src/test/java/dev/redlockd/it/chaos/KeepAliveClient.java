package dev.redlockd.it.chaos;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockNotAcquiredException;
import dev.redlockd.client.LockOptions;
import dev.redlockd.client.LockServiceException;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A holder on the Java client that keeps its lease over a KeepAlive stream for 0.7 to 2
 * ttls, writing every few tens of milliseconds while {@code Lease.isValid()}, and stops at once
 * when {@code onLost} fires. Its deadline is read from the lease before each write.
 */
final class KeepAliveClient extends ChaosClient {
  private final LockClient locks;

  KeepAliveClient(String name, int replica, LockClient locks, Shared shared, long seed) {
    super(name, ClientKind.KEEP_ALIVE, replica, shared, seed);
    this.locks = locks;
  }

  @Override
  void round() throws InterruptedException {
    String resource = pickResource();
    Duration ttl = pickTtl();
    long sent = System.nanoTime();
    Lease lease;
    try {
      lease = locks.acquire(resource, LockOptions.ttl(ttl).waitUpTo(millisBetween(200, 2000)));
    } catch (LockNotAcquiredException e) {
      acquireFailed(resource, sent, Status.ABORTED);
      return;
    } catch (LockServiceException e) {
      acquireFailed(resource, sent, e.status());
      return;
    }
    long start = System.nanoTime();
    long leaseId = nextLeaseId();
    shared.history().acquire(AcquireCall.granted(resource, kind, replica, sent, start, lease.fencingToken(), leaseId));

    CountDownLatch lostSignal = new CountDownLatch(1);
    AtomicReference<Status> lostWith = new AtomicReference<>();
    lease.onLost(e -> {
      lostWith.set(e.status());
      lostSignal.countDown();
    });
    lease.keepAlive();
    shared.streams().opened(leaseId, replica, resource);
    long holdUntil = start + (long) (ttl.toNanos() * (0.7 + 1.3 * random.nextDouble()));
    ProtectedResource store = store(resource);
    long deadline = Long.MIN_VALUE;
    long end;
    try {
      // Writes while the lease is valid, re-reading its deadline before every write; the
      // first look happens even if the run is stopping, so that every grant is looked at.
      while (true) {
        long now = System.nanoTime();
        long current = deadlineOf(lease);
        if (current == Long.MIN_VALUE) {
          break;
        }
        deadline = current;
        store.write(leaseId, lease.fencingToken(), deadline);
        long slice = TimeUnit.MILLISECONDS.toNanos(20 + random.nextInt(40));
        if (now >= holdUntil || stopping()
            || lostSignal.await(Math.min(slice, holdUntil - now), TimeUnit.NANOSECONDS)) {
          break;
        }
      }
    } finally {
      end = System.nanoTime();
      shared.streams().closed(leaseId);
    }
    if (deadline == Long.MIN_VALUE) {
      shared.history().expiredOnArrival(kind);
    } else {
      shared.history().section(new CriticalSection(resource, name, kind, leaseId, lease.fencingToken(), start, end,
          deadline));
    }
    if (lostWith.get() != null) {
      shared.history().leaseLost(kind, lostWith.get().getCode());
    }
    long releaseSent = System.nanoTime();
    boolean released = false;
    try {
      released = lease.release();
    } catch (LockServiceException e) {
      // Unreachable: the lease runs out at its ttl.
    }
    shared.history().release(new ReleaseCall(resource, kind, releaseSent, released));
  }
}
