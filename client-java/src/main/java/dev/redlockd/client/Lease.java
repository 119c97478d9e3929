package dev.redlockd.client;

import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ExtendResponse;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.proto.v1.ReleaseResponse;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A held lock. Knows its local deadline (the time the request was sent, plus the validity the
 * server returned) on a monotonic clock; {@link #close()} releases it. The token stays inside:
 * it appears in no {@code toString()} and no exception message.
 *
 * <p>The lease counts as valid until a guard before that deadline (ttl/20, at most 100 ms), and
 * is reported lost then: a timer that runs a little late still tells the holder before the
 * deadline itself has passed, which is the moment another holder may be granted the lock.
 */
public final class Lease implements AutoCloseable {
  private static final Duration MAX_GUARD = Duration.ofMillis(100);

  private final LockClient client;
  private final String resource;
  private final String token;
  private final long fencingToken;
  private final Duration ttl;
  private final long guardNanos;
  private final AtomicBoolean released = new AtomicBoolean();
  private final List<Consumer<LeaseLostException>> lostListeners = new CopyOnWriteArrayList<>();

  private volatile long deadlineNanos;
  private volatile LeaseLostException lost;
  private LeaseKeeper keeper; // guarded by this
  private ScheduledFuture<?> expiryCheck; // guarded by this

  Lease(LockClient client, String resource, String token, long fencingToken, Duration ttl, long deadlineNanos) {
    this.client = client;
    this.resource = resource;
    this.token = token;
    this.fencingToken = fencingToken;
    this.ttl = ttl;
    this.guardNanos = guard(ttl).toNanos();
    this.deadlineNanos = deadlineNanos;
    scheduleExpiryCheck();
  }

  /** How long before its deadline a lease stops counting as valid: ttl/20, at most 100 ms. */
  static Duration guard(Duration ttl) {
    Duration twentieth = ttl.dividedBy(20);
    return twentieth.compareTo(MAX_GUARD) < 0 ? twentieth : MAX_GUARD;
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
    return !released.get() && lost == null && client.nanoTime() < deadlineNanos - guardNanos;
  }

  /** Time left while valid (up to the guard before the deadline); zero once the lease is not valid. */
  public Duration remaining() {
    return isValid() ? Duration.ofNanos(deadlineNanos - guardNanos - client.nanoTime()) : Duration.ZERO;
  }

  /**
   * The local deadline on {@link System#nanoTime()}: the send time of the request that granted
   * or last renewed the lease, plus the validity the server returned. Another holder may be
   * granted the lock after it; this lease stops counting as valid a guard before it.
   */
  public long deadlineNanos() {
    return deadlineNanos;
  }

  /**
   * Renews the lease for {@code ttl} from now. UNAVAILABLE is retried while the lease is still
   * valid. Throws {@link LeaseLostException} when the lease is no longer held.
   */
  public Lease extend(Duration ttl) {
    if (released.get()) {
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
        throw lost;
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
    if (!released.compareAndSet(false, true)) {
      return false;
    }
    LeaseKeeper k;
    synchronized (this) {
      k = keeper;
      cancelExpiryCheck();
    }
    if (k != null && lost == null) {
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
    if (released.compareAndSet(false, true)) {
      synchronized (this) {
        cancelExpiryCheck();
      }
      client.releaseQuietly(resource, token);
    }
  }

  private void cancelExpiryCheck() {
    if (expiryCheck != null) {
      expiryCheck.cancel(false);
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
    if (keeper == null && !released.get() && lost == null) {
      keeper = new LeaseKeeper(this, client::nanoTime, client.scheduler());
      keeper.start(client.streamingStub(), token, ttl);
    }
    return this;
  }

  /** Called once, from a client thread, when the lease is lost (at once if it already is). */
  public Lease onLost(Consumer<LeaseLostException> callback) {
    lostListeners.add(callback);
    LeaseLostException already = lost;
    if (already != null && lostListeners.remove(callback)) {
      callback.accept(already);
    }
    return this;
  }

  void renewed(long newDeadlineNanos) {
    deadlineNanos = newDeadlineNanos;
    scheduleExpiryCheck();
  }

  void lost(Status status) {
    LeaseLostException e;
    synchronized (this) {
      if (released.get() || lost != null) {
        return;
      }
      lost = e = new LeaseLostException(status);
      if (keeper != null) {
        keeper.cancel();
      }
    }
    for (Consumer<LeaseLostException> listener : lostListeners) {
      if (lostListeners.remove(listener)) {
        listener.accept(e);
      }
    }
  }

  private synchronized void scheduleExpiryCheck() {
    cancelExpiryCheck();
    long delay = deadlineNanos - guardNanos - client.nanoTime();
    expiryCheck = client.scheduler().schedule(() -> {
      if (!released.get() && client.nanoTime() >= deadlineNanos - guardNanos) {
        lost(Status.DEADLINE_EXCEEDED.withDescription("lease on resource '" + resource
            + "' ran out: its local deadline came within " + TimeUnit.NANOSECONDS.toMillis(guardNanos)
            + " ms without a renewal"));
      }
    }, Math.max(0, delay), TimeUnit.NANOSECONDS);
  }

  @Override
  public String toString() {
    return "Lease[resource=" + resource + ", fencingToken=" + Long.toUnsignedString(fencingToken)
        + ", remaining=" + remaining().toMillis() + "ms]";
  }
}
