package dev.redlockd.client;

import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ExtendResponse;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.proto.v1.ReleaseResponse;
import io.grpc.Status;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * A held lock. Knows its local deadline (the time the request was sent, plus the validity the
 * server returned) on a monotonic clock, and counts as valid until a guard before it
 * ({@link Lifetime}); {@link #close()} releases it. The token stays inside: it appears in no
 * {@code toString()} and no exception message.
 */
public final class Lease implements AutoCloseable {
  private final LockClient client;
  private final String resource;
  private final String token;
  private final long fencingToken;
  private final Duration ttl;
  private final Lifetime lifetime;
  private LeaseKeeper keeper; // guarded by this

  Lease(LockClient client, String resource, String token, long fencingToken, Duration ttl, long deadlineNanos) {
    this.client = client;
    this.resource = resource;
    this.token = token;
    this.fencingToken = fencingToken;
    this.ttl = ttl;
    this.lifetime = new Lifetime(client, "lease on resource '" + resource + "'", ttl, deadlineNanos);
  }

  /** How long before its deadline a lease stops counting as valid: ttl/20, at most 100 ms. */
  static Duration guard(Duration ttl) {
    return Lifetime.guard(ttl);
  }

  public String resource() {
    return resource;
  }

  /** Strictly increases per resource across grants: send it with every write the lock protects. */
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
   * Renews the lease for {@code ttl} from now. UNAVAILABLE is retried while the lease is still
   * valid. Throws {@link LeaseLostException} when the lease is no longer held.
   */
  public Lease extend(Duration ttl) {
    if (lifetime.isEnded()) {
      throw new LeaseLostException(Status.FAILED_PRECONDITION.withDescription(
          "lease on resource '" + resource + "' was released"));
    }
    long sent = client.nanoTime();
    ExtendResponse response;
    try {
      response = client.call((stub, observer) -> stub.extend(ExtendRequest.newBuilder()
          .setResource(resource).setToken(token).setTtl(ProtoTime.toProto(ttl)).build(), observer),
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
    return this;
  }

  /**
   * Releases the lease (stopping its keep-alive). Idempotent: true only on the call that
   * released a lease a quorum still held.
   */
  public boolean release() {
    if (!lifetime.end()) {
      return false;
    }
    boolean wasLost = lifetime.isLost();
    LeaseKeeper k;
    synchronized (this) {
      k = keeper;
    }
    if (k != null && !wasLost) {
      // Half-close: the server releases and ends the stream OK (NOT_FOUND if it was not held).
      Status ended;
      try {
        ended = client.awaitCall(k.halfClose());
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
        ReleaseRequest.newBuilder().setResource(resource).setToken(token).build(), observer), () -> true);
    return response.getReleased();
  }

  /** For a lease granted to a caller that no longer wants it: released in the background. */
  void abandon() {
    if (lifetime.end()) {
      client.releaseQuietly(resource, token);
    }
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
   * this lease's deadline moves with each renewal. If the stream ends or the deadline passes without
   * a renewal, the {@link #onLost} callbacks fire.
   */
  public synchronized Lease keepAlive() {
    if (keeper == null && lifetime.isOpen()) {
      keeper = new LeaseKeeper(this, client::nanoTime, client.scheduler());
      keeper.start(client.streamingStub(), token, ttl);
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
    lifetime.lose(status, () -> {
      synchronized (this) {
        if (keeper != null) {
          keeper.cancel();
        }
      }
    });
  }

  @Override
  public String toString() {
    return "Lease[resource=" + resource + ", fencingToken=" + Long.toUnsignedString(fencingToken)
        + ", remaining=" + remaining().toMillis() + "ms]";
  }
}
