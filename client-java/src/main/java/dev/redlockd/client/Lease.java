package dev.redlockd.client;

import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ExtendResponse;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.proto.v1.ReleaseResponse;
import io.grpc.Status;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A held lock, or a held permit of a semaphore ({@link #permit()}). Knows its local deadline
 * (the time the request was sent, plus the validity the server returned) on a monotonic clock,
 * and counts as valid until a guard before it ({@link Lifetime}); {@link #close()} releases it. The token stays inside: it appears in no
 * {@code toString()} and no exception message.
 */
public final class Lease implements AutoCloseable {
  private final LockClient client;
  private final String resource;
  /** 0 for a lock; 1..N for a permit. */
  private final int permit;
  private final String token;
  private final long fencingToken;
  /** The lease's ttl, as last set by its grant or by {@link #extend}. */
  private volatile Duration ttl;
  private final Lifetime lifetime;
  private LeaseKeeper keeper; // guarded by this

  Lease(LockClient client, String resource, int permit, String token, long fencingToken, Duration ttl,
      long deadlineNanos) {
    this.client = client;
    this.resource = resource;
    this.permit = permit;
    this.token = token;
    this.fencingToken = fencingToken;
    this.ttl = ttl;
    this.lifetime = new Lifetime(client, describe(resource, permit), ttl, deadlineNanos,
        this::stopAfterLoss);
  }

  /** How long before its deadline a lease stops counting as valid: ttl/20, at most 100 ms. */
  static Duration guard(Duration ttl) {
    return Lifetime.guard(ttl);
  }

  /** What messages call this lease: its resource, and its permit if it is one. */
  private static String describe(String resource, int permit) {
    return permit == 0 ? "lease on resource '" + resource + "'"
        : "permit " + permit + " of semaphore '" + resource + "'";
  }

  /** How messages name this lease (never with its token). */
  String description() {
    return describe(resource, permit);
  }

  public String resource() {
    return resource;
  }

  /**
   * Which of the semaphore's N permits this lease holds (1..N), as the server granted it; 0 for a
   * lock. Extend, Release and KeepAlive name it with the token.
   */
  public int permit() {
    return permit;
  }

  /**
   * Strictly increases per resource across grants (per permit, for a semaphore's permits): send
   * it with every write the lock protects.
   */
  public long fencingToken() {
    return fencingToken;
  }

  /**
   * True until the guard before the local deadline is reached (unless a renewal moved the
   * deadline), the lease is lost, or it is released.
   */
  public boolean isValid() {
    return lifetime.isValid();
  }

  /** Time left while valid (up to the guard before the deadline); zero once the lease is not valid. */
  public Duration remaining() {
    return lifetime.remaining();
  }

  /**
   * The local deadline on {@link System#nanoTime()}: the send time of the request that granted
   * or last renewed the lease, plus the validity the server returned. Another holder may be
   * granted the lock after it; this lease stops counting as valid a guard before it.
   */
  public long deadlineNanos() {
    return lifetime.deadlineNanos();
  }

  /**
   * Renews the lease for {@code ttl} from now, and keeps that ttl for later renewals. On a
   * kept lease ({@link #keepAlive()}) this goes through its KeepAlive stream: a request with the
   * new ttl, answered once a quorum has it; from the moment it is sent, answers to earlier
   * requests no longer count, and a shorter ttl cuts the local deadline at once to what it may
   * leave on the nodes. Otherwise it is an Extend call, UNAVAILABLE retried while the lease is
   * still valid.
   *
   * @throws LeaseLostException when the lease is no longer held (or was released)
   * @throws LockServiceException when no answer came within the call timeout, or on another failure
   */
  public Lease extend(Duration ttl) {
    Objects.requireNonNull(ttl, "ttl");
    if (lifetime.isEnded()) {
      throw new LeaseLostException(Status.FAILED_PRECONDITION.withDescription(
          describe(resource, permit) + " was released"));
    }
    LeaseLostException alreadyLost = lifetime.loss();
    if (alreadyLost != null) {
      throw alreadyLost;
    }
    LeaseKeeper k;
    synchronized (this) {
      k = keeper;
      this.ttl = ttl;
    }
    if (k != null) {
      try {
        client.awaitCall(k.changeTtl(ttl));
      } catch (LockServiceException e) {
        LeaseLostException reported = lifetime.loss();
        throw reported != null ? reported : e;
      }
      return this;
    }
    long sent = client.nanoTime();
    ExtendResponse response;
    try {
      response = client.call((stub, observer) -> stub.extend(ExtendRequest.newBuilder()
          .setResource(resource).setPermit(permit).setToken(token).setTtl(ProtoTime.toProto(ttl)).build(),
          observer),
          this::isValid);
    } catch (LockServiceException e) {
      if (e.status().getCode() == Status.Code.NOT_FOUND) {
        lost(e.status());
        LeaseLostException reported = lifetime.loss();
        throw reported != null ? reported : new LeaseLostException(e.status());
      }
      throw e;
    }
    renewed(sent + ProtoTime.fromProto(response.getLease().getValidity()).toNanos());
    lifetime.ttlChanged(ttl);
    return this;
  }

  /**
   * Releases the lease (stopping its keep-alive). Idempotent: true only on the call that
   * released a lease a quorum still held; false at once for a lease lost before (its loss gave
   * it back already).
   */
  public boolean release() {
    if (!lifetime.end()) {
      return false;
    }
    boolean wasLost = lifetime.isLost();
    if (wasLost) {
      // The loss gave it back already (a half-close, or a Release through any replica): nothing
      // more to send, and nothing to wait for (no quorum may answer now).
      return false;
    }
    LeaseKeeper k;
    synchronized (this) {
      k = keeper;
    }
    if (k != null) {
      k.failChanges(new LeaseLostException(Status.FAILED_PRECONDITION.withDescription(
          describe(resource, permit) + " was released")));
    }
    if (k != null) {
      // Half-close: the server releases and ends the stream OK (NOT_FOUND if it was not held).
      // It is the release's first attempt, held to an attempt's timeout: a stream on a replica
      // gone silent since its last answer never ends, and the Release below goes elsewhere.
      Status ended;
      try {
        ended = client.awaitCall(k.halfClose(), client.attemptTimeout());
      } catch (LockServiceException e) {
        k.cancel();
        ended = e.status();
      }
      if (ended.isOk()) {
        return true;
      }
      if (ended.getCode() == Status.Code.NOT_FOUND) {
        return false;
      }
      // The stream failed on its way out: fall back to a plain Release.
    }
    ReleaseResponse response = client.call((stub, observer) -> stub.release(
        ReleaseRequest.newBuilder().setResource(resource).setPermit(permit).setToken(token).build(), observer),
        () -> true);
    return response.getReleased();
  }

  /** For a lease granted to a caller that no longer wants it: released in the background. */
  void abandon() {
    if (lifetime.end()) {
      client.releaseQuietly(resource, permit, token);
    }
  }

  /** A fire-and-forget Release (a kept stream refused "do not retry" has no stream to half-close). */
  void releaseInBackground() {
    client.releaseQuietly(resource, permit, token);
  }

  /** Releases; never throws for a lease that expired or could not be reached (it runs out by itself). */
  @Override
  public void close() {
    try {
      release();
    } catch (LockServiceException e) {
      // Expired, lost or unreachable: nothing the caller can do, and the lease runs out anyway.
    }
  }

  /**
   * Keeps the lease alive on a KeepAlive stream: renewed every ttl/4 (the client asks) and
   * this lease's deadline moves with each renewal. A stream that breaks (a replica restarting,
   * a lost connection) is reopened, on any replica the channel reaches, with the same token:
   * the lease goes on with the same fencing token if a renewal lands before its guarded
   * deadline. If the stream ends because the lease is gone (NOT_FOUND, PERMISSION_DENIED) or
   * the deadline passes without a renewal, the {@link #onLost} callbacks fire.
   */
  public synchronized Lease keepAlive() {
    if (keeper == null && lifetime.isOpen()) {
      keeper = new LeaseKeeper(this, client, token, ttl);
      keeper.start();
    }
    return this;
  }

  /** Called once, from a client thread, when the lease is lost (at once if it already is). */
  public Lease onLost(Consumer<LeaseLostException> callback) {
    lifetime.onLost(callback);
    return this;
  }

  void renewed(long newDeadlineNanos) {
    lifetime.renewed(newDeadlineNanos);
  }

  void lost(Status status) {
    lifetime.lose(status);
  }

  /** Neither released nor lost. */
  boolean isOpen() {
    return lifetime.isOpen();
  }

  /** Under the keeper's lock: the ttl changed (the guard follows it). */
  void ttlChanged(Duration newTtl) {
    lifetime.ttlChanged(newTtl);
  }

  /** Under the keeper's lock: the deadline may be no later than this. */
  void cut(long latestDeadlineNanos) {
    lifetime.cut(latestDeadlineNanos);
  }

  /** On a loss: stop renewing and give the lease back, so that the next holder need not wait out its ttl. */
  private void stopAfterLoss(Status status) {
    LeaseKeeper k;
    synchronized (this) {
      k = keeper;
    }
    if (k != null) {
      k.failChanges(lifetime.loss() != null ? lifetime.loss() : new LeaseLostException(status));
      k.giveBack(); // half-closes, unless the stream already ended for good
    } else if (status.getCode() != Status.Code.NOT_FOUND) {
      client.releaseQuietly(resource, permit, token);
    }
  }

  @Override
  public String toString() {
    return "Lease[resource=" + resource + (permit == 0 ? "" : ", permit=" + permit)
        + ", fencingToken=" + Long.toUnsignedString(fencingToken)
        + ", remaining=" + remaining().toMillis() + "ms]";
  }
}
