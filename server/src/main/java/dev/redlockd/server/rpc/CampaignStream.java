package dev.redlockd.server.rpc;

import dev.redlockd.election.Candidacy;
import dev.redlockd.election.Elections;
import dev.redlockd.engine.InvalidRequestException;
import dev.redlockd.engine.LockEngineException;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.server.access.Printable;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Campaign stream: one candidacy for the stream's life. The ways out are KeepAlive's:
 * half-close resigns (or withdraws) and ends OK; cancel or disconnect lets the leadership run
 * out; a lost leadership ends the stream with NOT_FOUND or UNAVAILABLE; server shutdown ends it
 * with UNAVAILABLE and resigns nothing, so that the leader resumes through another replica
 * (CampaignRequest.resume) with the same term, and so does a replica whose renewals of the
 * leadership reach no quorum ({@link HandOn}). A leader silent for longer than the ttl is gone
 * ({@link ReaderSilence}): renewals stop, the stream ends DEADLINE_EXCEEDED, the leadership runs out;
 * so is a candidate still waiting in line ({@link #sweep}): it is withdrawn.
 */
final class CampaignStream extends KeptStream<CampaignResponse>
    implements StreamObserver<CampaignRequest>, Candidacy.Listener {
  private static final Logger log = LoggerFactory.getLogger(CampaignStream.class);

  private final Elections elections;
  /** The refusal of a renewal under the access rules in force now, or null when it is allowed. */
  private final Function<String, Status> renewalRefusal;

  private Candidacy candidacy; // guarded by this
  /** Set before the candidacy starts, so its first leadership can be checked against it. */
  private volatile String electionName = "";

  CampaignStream(Elections elections, OpenStreams registry, ServerCallStreamObserver<CampaignResponse> call,
      Function<String, Status> renewalRefusal) {
    super(registry, call, "Campaign", "leadership");
    this.elections = elections;
    this.renewalRefusal = renewalRefusal;
  }

  @Override
  public void onNext(CampaignRequest request) {
    heard();
    String election = request.getElection();
    Candidacy current;
    Duration ttl;
    try {
      ttl = request.hasTtl() ? ProtoDurations.fromProto(election, "ttl", request.getTtl()) : null;
      synchronized (this) {
        if (finished()) {
          return;
        }
        if (candidacy == null) {
          electionName = election;
          candidacy = elections.campaign(election, request.getValue(), ttl, request.getToken(),
              request.getResume(), request.getSequence(), this);
          ttlAsked(ttl);
          return;
        }
        if (!candidacy.election().equals(election)) {
          throw new InvalidRequestException("election '" + election
              + "': a Campaign stream runs one candidacy; this request names another election");
        }
        if (!request.getToken().isEmpty() && !candidacy.hasToken(request.getToken())) {
          throw new InvalidRequestException("election '" + election
              + "': a Campaign stream keeps its first request's candidate token; this request carries another");
        }
        elections.checkUpdate(election, request.getValue(), ttl);
        ttlAsked(ttl);
        current = candidacy;
      }
    } catch (InvalidRequestException e) {
      // Not resigned: the leader may believe it leads until it reads this status; it gives the
      // leadership back itself, or it runs out.
      abandon();
      end(StatusMapper.toStatus(e));
      return;
    }
    current.update(request.getValue(), ttl, request.getSequence());
  }

  /** Client half-close: resign (or withdraw), then end OK. */
  @Override
  public void onCompleted() {
    Candidacy running = detach();
    if (running == null) {
      end(Status.OK);
      return;
    }
    running.resign().whenComplete((done, failure) -> end(Status.OK));
  }

  @Override
  public void onError(Throwable t) {
    clientGone();
  }

  @Override
  protected void stopKeeping() {
    abandon();
  }

  /**
   * Server shutdown: renewals stop, nothing is resigned, the stream ends UNAVAILABLE. The
   * leadership holds until its validity runs out, as its leader believes, and the leader
   * resumes it through another replica meanwhile.
   */
  @Override
  public CompletableFuture<Void> shutdown() {
    abandon();
    end(StatusMapper.shuttingDown());
    return CompletableFuture.completedFuture(null);
  }

  /** A candidate still waiting to lead, whose client has gone silent, is withdrawn ({@link OpenStreams#sweepEvery}). */
  @Override
  public void sweep() {
    Candidacy running;
    synchronized (this) {
      running = candidacy;
    }
    if (running != null && running.waiting()) {
      waitingReaderGone();
    }
  }

  private void abandon() {
    Candidacy running = detach();
    if (running != null) {
      running.abandon();
    }
  }

  /**
   * As for KeepAlive: a leadership the access rules no longer grant (they were reloaded) is no
   * longer renewed, and runs out at its validity; the stream ends PERMISSION_DENIED.
   */
  @Override
  public void leading(Candidacy.Leadership leadership, long mark) {
    Status refused = renewalRefusal.apply(electionName);
    if (refused != null) {
      abandon();
      end(refused);
      return;
    }
    if (readerGone()) {
      return;
    }
    leases().renewed("Campaign", true);
    send(leadership, LeaseState.LEASE_STATE_HELD, mark);
  }

  @Override
  public void jeopardy(Candidacy.Leadership leadership, LockEngineException cause, long mark) {
    if (readerGone()) {
      return;
    }
    log.debug("leadership in election '{}' in jeopardy: {}", Printable.of(
        candidacyElection()), cause.getMessage());
    leases().renewed("Campaign", false);
    send(leadership, LeaseState.LEASE_STATE_JEOPARDY, mark);
    inJeopardy(leadership.validity(), cause);
  }

  /** A first renewal of the leadership here missed the quorum: handed on once its retry misses too. */
  @Override
  public void unconfirmed(LockEngineException cause, long mark) {
    unconfirmed(cause);
  }

  @Override
  public void lost(LockEngineException cause) {
    detach();
    Status status = StatusMapper.toStatus(cause);
    leases().lost("Campaign", status.getCode().name());
    log.info("campaign ends {}: {}", status.getCode(), cause.getMessage());
    end(status);
  }

  private synchronized String candidacyElection() {
    return candidacy == null ? "" : candidacy.election();
  }

  private synchronized Candidacy detach() {
    Candidacy running = candidacy;
    candidacy = null;
    return running;
  }

  private void send(Candidacy.Leadership leadership, LeaseState state, long mark) {
    send(CampaignResponse.newBuilder()
        .setTerm(leadership.term())
        .setValue(leadership.value())
        .setValidity(ProtoDurations.toProto(leadership.validity()))
        .setState(state)
        .setSequence(mark)
        .build());
  }
}
