package dev.redlockd.server.rpc;

import dev.redlockd.engine.Grant;
import dev.redlockd.engine.InvalidRequestException;
import dev.redlockd.engine.KeptLease;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.LockEngineException;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.server.access.KeptLeaseAccount;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One KeepAlive stream: binds one lease to the stream's life. Every way out stops the
 * renewals exactly once: half-close releases and ends OK; cancel or disconnect lets the lease
 * run out (a partitioned holder looks exactly like a gone one); a lost lease ends the stream
 * with NOT_FOUND or UNAVAILABLE; server shutdown ends it with UNAVAILABLE and releases nothing,
 * so that the holder resumes the lease through another replica. So does a replica whose
 * renewals reach no quorum ({@link HandOn}), and one whose holder keeps the lease here through a
 * newer stream ({@link #superseded}). A client silent for longer than the ttl is gone
 * ({@link ReaderSilence}): renewals stop, the stream ends DEADLINE_EXCEEDED, the lease runs out.
 * Only the holder's half-close releases here.
 */
final class KeepAliveStream extends KeptStream<KeepAliveResponse>
    implements StreamObserver<KeepAliveRequest>, KeptLease.Listener {
  private static final Logger log = LoggerFactory.getLogger(KeepAliveStream.class);

  private final LockEngine engine;
  private final KeptLeaseAccount account;
  // What a half-close releases, for the caller's share: the first grant, as every later one names
  // the same lease; keeping each renewal's Grant would keep it alive for a whole interval.
  private volatile Grant firstGrant;

  private KeptLease lease; // guarded by this

  KeepAliveStream(LockEngine engine, OpenStreams registry, ServerCallStreamObserver<KeepAliveResponse> call,
      KeptLeaseAccount account) {
    super(registry, call, "KeepAlive", "lease");
    this.engine = engine;
    this.account = account;
  }

  @Override
  public void onNext(KeepAliveRequest request) {
    heard();
    String resource = request.getResource();
    KeptLease current;
    Duration newTtl = null;
    try {
      Duration ttl = request.hasTtl() ? ProtoDurations.fromProto(resource, "ttl", request.getTtl()) : null;
      synchronized (this) {
        if (finished()) {
          return;
        }
        if (lease == null) {
          lease = engine.keep(resource, request.getPermit(), request.getToken(), ttl, this);
          ttlAsked(ttl);
          current = lease;
        } else if (!lease.names(resource, request.getPermit(), request.getToken())) {
          throw new InvalidRequestException("resource '" + resource
              + "': a KeepAlive stream keeps one lease; this request names another");
        } else {
          if (ttl != null) {
            engine.rules().ttl(resource, ttl);
            ttlAsked(ttl);
          }
          newTtl = ttl;
          current = lease;
        }
      }
    } catch (InvalidRequestException e) {
      stopRenewing();
      end(StatusMapper.toStatus(e));
      return;
    }
    current.renewNow(newTtl, request.getSequence());
  }

  /** Client half-close: release, then end OK (or say why the release could not be confirmed). */
  @Override
  public void onCompleted() {
    KeptLease kept = detach();
    if (kept == null) {
      end(Status.OK);
      return;
    }
    kept.release().whenComplete((released, failure) -> {
      Grant first = firstGrant;
      if (first != null) {
        account.released(first);
      }
      end(failure == null ? Status.OK : StatusMapper.toStatus(failure));
    });
  }

  /** The client cancelled or disconnected. */
  @Override
  public void onError(Throwable t) {
    clientGone();
  }

  @Override
  protected void stopKeeping() {
    stopRenewing();
  }

  /**
   * Server shutdown: renewals stop and the stream ends with UNAVAILABLE; the lease stays held
   * until its validity runs out, which is what its holder believes, and the holder renews it
   * through another replica meanwhile.
   */
  @Override
  public CompletableFuture<Void> shutdown() {
    stopRenewing();
    end(StatusMapper.shuttingDown());
    return CompletableFuture.completedFuture(null);
  }

  private void stopRenewing() {
    KeptLease kept = detach();
    if (kept != null) {
      kept.stop();
    }
  }

  /**
   * A renewal the access rules no longer grant (they were reloaded) ends the stream
   * PERMISSION_DENIED; the lease is not released, only no longer renewed: a reload never breaks a
   * lease, it runs out at its validity.
   */
  @Override
  public void held(Grant lease, long sequence) {
    Status refused = account.renewalRefusal(lease.resource());
    if (refused != null) {
      stopRenewing();
      end(refused);
      return;
    }
    if (readerGone()) {
      return;
    }
    if (firstGrant == null) {
      firstGrant = lease;
    }
    account.renewed(lease);
    leases().renewed("KeepAlive", true);
    send(lease, LeaseState.LEASE_STATE_HELD, sequence);
  }

  @Override
  public void jeopardy(Grant lease, LockEngineException cause, long sequence) {
    if (readerGone()) {
      return;
    }
    // Per lease and per retry: when a node blips, thousands of these; NodeMonitor logs the node once.
    log.debug("kept lease on resource '{}' in jeopardy: {}", lease.resource(), cause.getMessage());
    leases().renewed("KeepAlive", false);
    send(lease, LeaseState.LEASE_STATE_JEOPARDY, sequence);
    inJeopardy(lease.validity(), cause);
  }

  @Override
  public void superseded() {
    endSuperseded();
  }

  /** A first renewal here missed the quorum: no validity to wait out; handed on once its retry misses too. */
  @Override
  public void unconfirmed(LockEngineException cause, long sequence) {
    unconfirmed(cause);
  }

  @Override
  public void lost(LockEngineException cause) {
    detach();
    Status status = StatusMapper.toStatus(cause);
    leases().lost("KeepAlive", status.getCode().name());
    // Once per lost lease; the engine's messages name the resource, never the token.
    log.info("kept lease lost, its KeepAlive stream ends {}: {}", status.getCode(), cause.getMessage());
    end(status);
  }

  private synchronized KeptLease detach() {
    KeptLease kept = lease;
    lease = null;
    return kept;
  }

  private void send(Grant lease, LeaseState state, long sequence) {
    send(KeepAliveResponse.newBuilder()
        .setLease(LockServiceAdapter.toProto(lease))
        .setState(state)
        .setSequence(sequence)
        .build());
  }
}
