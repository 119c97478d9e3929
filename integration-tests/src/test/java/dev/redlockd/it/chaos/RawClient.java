package dev.redlockd.it.chaos;

import dev.redlockd.client.LockTokens;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ExtendResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A client on the generated stubs alone, as one in another language would be: Acquire (with
 * or without a wait, with a token of its own or the server's), sometimes an Extend half-way,
 * then Release. Its local deadline is the send time of the granting call plus the validity.
 * One round in five it is "paused" past that deadline and writes anyway, as a holder stuck in
 * a GC pause would: the protected resource must refuse it if a newer holder wrote meanwhile.
 */
final class RawClient extends ChaosClient {
  private static final Duration CALL_SLACK = Duration.ofSeconds(2);
  private final LockServiceGrpc.LockServiceBlockingStub stub;

  RawClient(String name, int replica, Channel channel, Shared shared, long seed) {
    super(name, ClientKind.RAW, replica, shared, seed);
    this.stub = LockServiceGrpc.newBlockingStub(channel);
  }

  @Override
  void round() throws InterruptedException {
    String resource = pickResource();
    Duration ttl = pickTtl();
    Duration wait = random.nextInt(3) == 0 ? Duration.ZERO : millisBetween(200, 1500);
    String token = random.nextBoolean() ? "" : LockTokens.newToken();
    long sent = System.nanoTime();
    Lease lease;
    try {
      lease = stub.withDeadlineAfter(wait.plus(CALL_SLACK).toNanos(), TimeUnit.NANOSECONDS)
          .acquire(AcquireRequest.newBuilder()
              .setResource(resource)
              .setTtl(proto(ttl))
              .setWait(proto(wait))
              .setOwner(name)
              .setToken(token)
              .build())
          .getLease();
    } catch (StatusRuntimeException e) {
      acquireFailed(resource, sent, answered(e));
      return;
    }
    long arrived = System.nanoTime();
    long leaseId = nextLeaseId();
    long fence = lease.getFencingToken();
    shared.history().acquire(AcquireCall.granted(resource, kind, replica, sent, arrived, fence, leaseId));
    long validity = nanos(lease.getValidity());
    long deadline = sent + validity;
    if (deadline - arrived < validity / 2) {
      // The grant came after a long wait, and the deadline counts from the send time: refresh
      // it with an Extend, whose send time is now. It succeeds only if the lease is still held.
      deadline = extend(resource, lease, ttl, deadline);
    }
    long start = System.nanoTime(); // the section starts once the holder knows its deadline
    if (deadline <= System.nanoTime()) {
      shared.history().expiredOnArrival(kind);
      release(resource, lease.getToken());
      return;
    }
    ProtectedResource store = store(resource);
    store.write(leaseId, fence, deadline);

    if (random.nextInt(5) == 0) {
      sleepUntil(deadline + TimeUnit.MILLISECONDS.toNanos(300 + random.nextInt(500)));
      store.write(leaseId, fence, deadline);
    } else {
      workWithin(deadline, 5 + random.nextInt(55));
      if (random.nextInt(5) == 0 && System.nanoTime() < deadline) {
        deadline = extend(resource, lease, ttl, deadline);
        workWithin(deadline, 5 + random.nextInt(55));
      }
      if (System.nanoTime() < deadline) {
        store.write(leaseId, fence, deadline);
      }
    }
    long end = System.nanoTime(); // before the Release is sent
    shared.history().section(new CriticalSection(resource, name, kind, leaseId, fence, start, end, deadline));
    release(resource, lease.getToken());
  }

  /**
   * Extends for the same ttl; the new deadline counts from this call's send time. On failure
   * the holder stops relying on the lease at once.
   */
  private long extend(String resource, Lease lease, Duration ttl, long deadline) {
    long sent = System.nanoTime();
    try {
      ExtendResponse response = stub.withDeadlineAfter(CALL_SLACK.toNanos(), TimeUnit.NANOSECONDS)
          .extend(ExtendRequest.newBuilder()
              .setResource(resource)
              .setToken(lease.getToken())
              .setTtl(proto(ttl))
              .build());
      shared.history().extend(io.grpc.Status.Code.OK);
      return sent + nanos(response.getLease().getValidity());
    } catch (StatusRuntimeException e) {
      io.grpc.Status.Code code = answered(e).getCode();
      shared.history().extend(code);
      if (!ContractCodes.LEASE.contains(code)) {
        shared.history().clientError(name + ": Extend ended with " + code);
      }
      // NOT_FOUND: the lease is gone; anything else: unknown. Either way, stop at once.
      return Math.min(deadline, System.nanoTime());
    }
  }

  private void release(String resource, String token) {
    long sent = System.nanoTime();
    boolean released = false;
    try {
      released = stub.withDeadlineAfter(CALL_SLACK.toNanos(), TimeUnit.NANOSECONDS)
          .release(ReleaseRequest.newBuilder().setResource(resource).setToken(token).build())
          .getReleased();
    } catch (StatusRuntimeException e) {
      io.grpc.Status.Code code = answered(e).getCode();
      if (!ContractCodes.LEASE.contains(code)) {
        shared.history().clientError(name + ": Release ended with " + code);
      }
      // Unreachable or unknown outcome: the lease runs out at its ttl.
    }
    shared.history().release(new ReleaseCall(resource, kind, sent, released));
  }

  /** Works (sleeps) for up to {@code millis}, but never past the deadline. */
  private static void workWithin(long deadline, long millis) throws InterruptedException {
    long until = Math.min(deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis));
    sleepUntil(until);
  }

  private static void sleepUntil(long nanoTime) throws InterruptedException {
    long left = nanoTime - System.nanoTime();
    if (left > 0) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  private static com.google.protobuf.Duration proto(Duration d) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }

  /**
   * What a raw-stub user should read: grpc-netty reports a call written to a connection that
   * just died (its replica SIGKILLed) as UNKNOWN "channel closed" with a ClosedChannelException.
   * That status is made by the client's transport, not sent by the server, and means the
   * connection is gone: UNAVAILABLE, as redlockd's Java client reports it too.
   */
  private static io.grpc.Status answered(StatusRuntimeException e) {
    io.grpc.Status status = e.getStatus();
    if (status.getCode() == io.grpc.Status.Code.UNKNOWN
        && status.getCause() instanceof java.nio.channels.ClosedChannelException) {
      return io.grpc.Status.UNAVAILABLE.withDescription(status.getDescription()).withCause(status.getCause());
    }
    return status;
  }
}
