package dev.redlockd.client;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * One {@link LockClient#acquireAsync} call: its attempts, all with the same token, until a
 * lease is granted or the caller gets a final answer.
 *
 * <p>An attempt whose outcome is unknown (UNAVAILABLE, DEADLINE_EXCEEDED) is retried: the
 * server refreshes a lease it already granted under this token rather than granting another.
 * UNAVAILABLE is retried until the call's own deadline (the wait plus the call timeout, from the
 * first attempt), not for a number of attempts: a replica going away answers it while another is
 * up; DEADLINE_EXCEEDED for the policy's attempts, counting only those that ended so
 * ({@link RetryPolicy}). Each attempt carries a deadline of the wait left plus the call timeout.
 * A grant whose answer arrives with less than half its validity left (typically after waiting
 * for another holder longer than the ttl, since the deadline can only be counted from when the
 * waiting call was sent) is asked again the same way: the refreshed answer comes at once, and
 * the lease handed out has most of its ttl ahead of it.
 */
final class PendingAcquire {
  /** Refreshes of a grant that came too late; more means every answer is slow, not the wait. */
  private static final int MAX_REFRESHES = 3;

  private final LockClient client;
  private final String resource;
  /** 0 for a lock, N for one of N permits. */
  private final int permits;
  private final Duration ttl;
  private final Duration wait;
  private final boolean keepAlive;
  private final String token;
  /** Every attempt's request but its wait: the same token, so a retry refreshes what it may have been granted. */
  private final AcquireRequest request;
  private final long startNanos;
  final CompletableFuture<Lease> result = new CompletableFuture<>();
  private volatile UnaryCall<AcquireRequest, AcquireResponse> inFlight;
  /** The permit an answer named (0: none yet); a retry under the same token gets the same one. */
  private volatile int grantedPermit;
  /** Attempts that ended DEADLINE_EXCEEDED: those the policy's attempts count (one attempt in flight at a time). */
  private volatile int timeouts;

  PendingAcquire(LockClient client, String resource, int permits, LockOptions options, String token) {
    this.client = client;
    this.resource = resource;
    this.permits = permits;
    this.ttl = client.ttl(options);
    this.wait = options.waitTime();
    this.keepAlive = options.keptAlive();
    this.token = token;
    this.request = client.acquireRequest(resource, permits, options)
        .setToken(token)
        .build();
    this.startNanos = client.nanoTime();
    result.whenComplete((lease, failure) -> {
      if (result.isCancelled()) {
        UnaryCall<AcquireRequest, AcquireResponse> call = inFlight;
        if (call != null) {
          call.cancel(false);
        }
        // The server may have granted before it heard of the cancel, and will not release a
        // lease whose token the caller chose: this client is the only one who can.
        giveBack();
      }
    });
  }

  /**
   * Sends attempt number {@code attempt}. {@code mayHold}: an earlier attempt may have been
   * granted, so a final failure must give that grant back.
   */
  void attempt(int attempt, int refreshes, boolean mayHold) {
    if (result.isDone()) {
      return;
    }
    Duration waitLeft = wait.minusNanos(client.nanoTime() - startNanos);
    if (waitLeft.isNegative()) {
      waitLeft = Duration.ZERO;
    }
    long sent = client.nanoTime();
    UnaryCall<AcquireRequest, AcquireResponse> call = client.sendAcquire(request, waitLeft);
    inFlight = call;
    if (result.isCancelled()) {
      call.cancel(false);
    }
    call.whenComplete((response, failure) -> {
      if (failure == null) {
        granted(response.getLease(), sent, attempt, refreshes);
      } else {
        failed(CallStatus.of(failure), failure, attempt, refreshes, mayHold);
      }
    });
  }

  private void granted(dev.redlockd.proto.v1.Lease granted, long sent, int attempt, int refreshes) {
    grantedPermit = granted.getPermit();
    long validity = ProtoTime.fromProto(granted.getValidity()).toNanos();
    long deadline = sent + validity;
    long left = deadline - client.nanoTime();
    if (left < validity / 2 && refreshes < MAX_REFRESHES) {
      attempt(attempt, refreshes + 1, true);
      return;
    }
    if (left <= 0) {
      giveBack();
      result.completeExceptionally(new LockServiceException(Status.DEADLINE_EXCEEDED.withDescription(
          "resource '" + resource + "': each grant ran out before its answer arrived")));
      return;
    }
    Lease lease = new Lease(client, resource, granted.getPermit(), token, granted.getFencingToken(), ttl, deadline);
    if (!result.complete(lease)) {
      lease.abandon(); // the caller cancelled meanwhile: give the lock back without blocking this thread
    } else if (keepAlive) {
      lease.keepAlive();
    }
  }

  private void failed(Status status, Throwable failure, int attempt, int refreshes, boolean mayHold) {
    boolean unavailable = status.getCode() == Status.Code.UNAVAILABLE;
    boolean timedOut = status.getCode() == Status.Code.DEADLINE_EXCEEDED;
    boolean unknownOutcome = unavailable || timedOut;
    if (timedOut) {
      timeouts++;
    }
    long pushback = Pushback.of(failure);
    long retryWait = client.retryWaitNanos(attempt, pushback);
    long callDeadline = startNanos + wait.plus(client.callTimeout()).toNanos();
    RetryPolicy policy = client.retryPolicy();
    boolean retry = unavailable ? policy.retriesUnavailable(client.nanoTime() + retryWait, callDeadline)
        : timedOut && policy.retriesTimeout(timeouts);
    if (retry && pushback != Pushback.STOP && !result.isDone()) {
      // A pushback's wait is taken from the Acquire's wait too: the retry sends what is left.
      client.retryAfter(() -> attempt(attempt + 1, refreshes, true), retryWait);
      return;
    }
    if (unknownOutcome || mayHold) {
      // An earlier attempt may have been granted after its answer was lost: give it back.
      giveBack();
    }
    result.completeExceptionally(status.getCode() == Status.Code.CANCELLED && result.isCancelled()
        ? failure : LockServiceException.of(status, failure));
  }

  /**
   * Fire and forget: releases whatever this token may hold. A permit no answer named could be
   * any of the N, so each is released (the server releases only the one this token holds).
   */
  private void giveBack() {
    int known = grantedPermit;
    if (known != 0 || permits == 0) {
      client.releaseQuietly(resource, known, token);
      return;
    }
    for (int permit = 1; permit <= permits; permit++) {
      client.releaseQuietly(resource, permit, token);
    }
  }
}
