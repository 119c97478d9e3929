package dev.redlockd.server.rpc;

import dev.redlockd.election.Elections;
import dev.redlockd.election.Leader;
import dev.redlockd.engine.InvalidRequestException;
import dev.redlockd.engine.LimitExceededException;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.LeaderResponse;
import dev.redlockd.proto.v1.Leadership;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import dev.redlockd.server.access.Access;
import dev.redlockd.server.access.Caller;
import dev.redlockd.server.access.Permission;
import dev.redlockd.server.access.Quotas;
import dev.redlockd.server.access.Shares;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/** The gRPC face of elections: proto in, election call, proto or status out. */
public final class ElectionServiceAdapter extends ElectionServiceGrpc.ElectionServiceImplBase {
  private final Elections elections;
  private final OpenStreams streams;
  private final Access access;
  private final Shares shares;

  public ElectionServiceAdapter(Elections elections, OpenStreams streams, Access access, Shares shares) {
    this.elections = elections;
    this.streams = streams;
    this.access = access;
    this.shares = shares;
  }

  @Override
  public StreamObserver<CampaignRequest> campaign(StreamObserver<CampaignResponse> responses) {
    ServerCallStreamObserver<CampaignResponse> call = (ServerCallStreamObserver<CampaignResponse>) responses;
    Caller caller = Caller.current();
    CampaignStream stream = new CampaignStream(elections, streams, call,
        election -> access.check(caller, "Campaign", Permission.CAMPAIGN, election));
    try {
      stream.holdUntilEnd(shares.electionStream(caller));
      streams.opened(stream);
    } catch (LimitExceededException | Quotas.Exhausted e) {
      stream.end(StatusMapper.toStatus(e));
    }
    return stream;
  }

  @Override
  public void leader(LeaderRequest request, StreamObserver<LeaderResponse> responses) {
    ServerCallStreamObserver<LeaderResponse> call = (ServerCallStreamObserver<LeaderResponse>) responses;
    var read = elections.leader(request.getElection());
    call.setOnCancelHandler(() -> read.cancel(false));
    read.whenComplete((leader, failure) -> {
      if (call.isCancelled()) {
        return;
      }
      if (failure != null) {
        call.onError(StatusMapper.toStatus(failure).asRuntimeException());
        return;
      }
      LeaderResponse.Builder response = LeaderResponse.newBuilder();
      leader.ifPresent(l -> response.setLeader(toProto(l)));
      call.onNext(response.build());
      call.onCompleted();
    });
  }

  static Leadership toProto(Leader leader) {
    return Leadership.newBuilder().setValue(leader.value()).setTerm(leader.term()).build();
  }

  @Override
  public void observe(ObserveRequest request, StreamObserver<ObserveResponse> responses) {
    ServerCallStreamObserver<ObserveResponse> call = (ServerCallStreamObserver<ObserveResponse>) responses;
    ObserveStream stream = new ObserveStream(streams, call);
    Caller caller = Caller.current();
    try {
      Quotas.Slot share = shares.electionStream(caller);
      // Observe renews nothing: it is checked again whenever the access rules are reloaded.
      Quotas.Slot watch = access.watch(caller, "Observe", Permission.OBSERVE, request.getElection(), stream::finish);
      stream.holdUntilEnd(() -> {
        watch.close();
        share.close();
      });
      streams.opened(stream);
      stream.start(elections, request.getElection());
    } catch (LimitExceededException | InvalidRequestException | Quotas.Exhausted e) {
      stream.finish(StatusMapper.toStatus(e));
    }
  }
}
