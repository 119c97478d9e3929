package dev.redlockd.it.chaos;

import dev.redlockd.client.LockTokens;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A semaphore worker on the generated stubs: Acquire one of N permits (with or without a
 * wait, its own token or the server's), work a little within its deadline (the send time of
 * the granting call plus the validity), sometimes Extend its permit, record the section, and
 * Release it. An Acquire whose outcome it cannot know, under a token of its own, is given back:
 * it does not know which permit it may hold, so it releases each under that token.
 */
final class PermitWorker implements Runnable {
  private static final Duration CALL_SLACK = Duration.ofSeconds(2);

  private final String name;
  private final String semaphore;
  private final int permits;
  private final LockServiceGrpc.LockServiceBlockingStub stub;
  private final History history;
  private final List<PermitSection> sections;
  private final BooleanSupplier stopping;
  private final Random random;

  PermitWorker(String name, String semaphore, int permits, Channel channel, History history,
      List<PermitSection> sections, BooleanSupplier stopping, long seed) {
    this.name = name;
    this.semaphore = semaphore;
    this.permits = permits;
    this.stub = LockServiceGrpc.newBlockingStub(channel);
    this.history = history;
    this.sections = sections;
    this.stopping = stopping;
    this.random = new Random(seed);
  }

  @Override
  public void run() {
    while (!stopping.getAsBoolean()) {
      try {
        round();
        TimeUnit.MILLISECONDS.sleep(5 + random.nextInt(40));
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        history.clientError(name + ": " + e);
        pause();
      }
    }
  }

  private void round() throws InterruptedException {
    Duration ttl = Duration.ofMillis(300 + random.nextInt(1700));
    Duration wait = random.nextInt(4) == 0 ? Duration.ZERO : Duration.ofMillis(200 + random.nextInt(1300));
    String token = random.nextInt(4) == 0 ? "" : LockTokens.newToken();
    long sent = System.nanoTime();
    Lease lease;
    try {
      lease = stub.withDeadlineAfter(wait.plus(CALL_SLACK).toNanos(), TimeUnit.NANOSECONDS)
          .acquire(AcquireRequest.newBuilder()
              .setResource(semaphore)
              .setPermits(permits)
              .setTtl(proto(ttl))
              .setWait(proto(wait))
              .setOwner(name)
              .setToken(token)
              .build())
          .getLease();
    } catch (StatusRuntimeException e) {
      Status.Code code = answered(e).getCode();
      if (!ContractCodes.ACQUIRE.contains(code)) {
        history.clientError(name + ": Acquire of a permit ended with " + code + " " + e.getStatus().getDescription());
      }
      if ((code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) && !token.isEmpty()) {
        for (int k = 1; k <= permits; k++) {
          release(k, token);
        }
      }
      return;
    }
    long start = System.nanoTime(); // the section starts once the holder knows its deadline
    long deadline = sent + ChaosClient.nanos(lease.getValidity());
    TimeUnit.MILLISECONDS.sleep(Math.max(0, Math.min(5 + random.nextInt(80),
        TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
    if (random.nextInt(4) == 0 && System.nanoTime() < deadline) {
      deadline = extend(lease, ttl, deadline);
      TimeUnit.MILLISECONDS.sleep(Math.max(0, Math.min(5 + random.nextInt(80),
          TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
    }
    long end = Math.min(System.nanoTime(), deadline); // before the Release is sent
    if (end > start) {
      sections.add(new PermitSection(name, lease.getPermit(), lease.getFencingToken(), start, end));
    }
    release(lease.getPermit(), lease.getToken());
  }

  /** The new deadline counts from this call's send time; on failure the holder stops at once. */
  private long extend(Lease lease, Duration ttl, long deadline) {
    long sent = System.nanoTime();
    try {
      Lease renewed = stub.withDeadlineAfter(CALL_SLACK.toNanos(), TimeUnit.NANOSECONDS)
          .extend(ExtendRequest.newBuilder()
              .setResource(semaphore)
              .setToken(lease.getToken())
              .setPermit(lease.getPermit())
              .setTtl(proto(ttl))
              .build())
          .getLease();
      if (renewed.getPermit() != lease.getPermit()) {
        history.clientError(name + ": Extend of permit " + lease.getPermit() + " answered permit " + renewed.getPermit());
      }
      return Math.max(deadline, sent + ChaosClient.nanos(renewed.getValidity()));
    } catch (StatusRuntimeException e) {
      Status.Code code = answered(e).getCode();
      if (!ContractCodes.LEASE.contains(code)) {
        history.clientError(name + ": Extend of a permit ended with " + code);
      }
      return Math.min(deadline, System.nanoTime());
    }
  }

  private void release(int permit, String token) {
    try {
      stub.withDeadlineAfter(CALL_SLACK.toNanos(), TimeUnit.NANOSECONDS)
          .release(ReleaseRequest.newBuilder().setResource(semaphore).setToken(token).setPermit(permit).build());
    } catch (StatusRuntimeException e) {
      Status.Code code = answered(e).getCode();
      if (!ContractCodes.LEASE.contains(code)) {
        history.clientError(name + ": Release of a permit ended with " + code);
      }
      // Unreachable or unknown outcome: the permit runs out at its ttl.
    }
  }

  private static void pause() {
    try {
      TimeUnit.MILLISECONDS.sleep(200);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static com.google.protobuf.Duration proto(Duration d) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }

  /** As {@link RawClient}: a call written to a connection that just died is UNAVAILABLE, not UNKNOWN. */
  private static Status answered(StatusRuntimeException e) {
    Status status = e.getStatus();
    if (status.getCode() == Status.Code.UNKNOWN
        && status.getCause() instanceof java.nio.channels.ClosedChannelException) {
      return Status.UNAVAILABLE.withDescription(status.getDescription()).withCause(status.getCause());
    }
    return status;
  }
}
