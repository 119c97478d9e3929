package dev.redlockd.client;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.LeaderResponse;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.Leadership;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A scriptable stand-in for ElectionService, for the client's API tests only: the test decides
 * when a candidate leads, what each answer says and how each stream ends. (Election safety is
 * tested against the real servers and real Redis.)
 */
final class FakeElectionService extends ElectionServiceGrpc.ElectionServiceImplBase {
  /** One Campaign stream as the server sees it. */
  static final class Candidate {
    final List<CampaignRequest> requests = new CopyOnWriteArrayList<>();
    final StreamObserver<CampaignResponse> answers;
    volatile boolean halfClosed;
    /** The client cancelled the stream (a RST_STREAM over a real connection). */
    volatile boolean cancelled;
    private boolean ended; // guarded by this
    /** Once set, every request is answered at once with this term and the request's value. */
    volatile long leadingTerm;
    volatile Duration validity = Duration.ofSeconds(10);

    Candidate(StreamObserver<CampaignResponse> answers) {
      this.answers = answers;
    }

    long lastSequence() {
      return requests.get(requests.size() - 1).getSequence();
    }

    synchronized void answer(long term, long sequence, String value, Duration validity) {
      if (ended) {
        return;
      }
      answers.onNext(CampaignResponse.newBuilder()
          .setTerm(term).setValue(value).setSequence(sequence).setState(LeaseState.LEASE_STATE_HELD)
          .setValidity(ProtoTime.toProto(validity)).build());
    }

    /** Leads from now on, answering the last request and every later one. */
    void lead(long term) {
      leadingTerm = term;
      CampaignRequest last = requests.get(requests.size() - 1);
      answer(term, last.getSequence(), last.getValue(), validity);
    }

    synchronized void end(Status status) {
      if (ended) {
        return;
      }
      ended = true;
      if (status.isOk()) {
        answers.onCompleted();
      } else {
        answers.onError(status.asRuntimeException());
      }
    }
  }

  final List<Candidate> candidates = new CopyOnWriteArrayList<>();
  final List<StreamObserver<ObserveResponse>> observers = new CopyOnWriteArrayList<>();
  final Queue<Status> failNextLeader = new ConcurrentLinkedQueue<>();
  volatile dev.redlockd.client.Leader leader;
  /** Non-zero: a stream whose first request asks to resume leads at once with this term. */
  volatile long termOnResume;
  /** Set: a stream whose first request asks to resume ends with this status (the leadership is gone). */
  volatile Status refuseResume;
  /** Set: a half-close (a resign) is not answered until the test ends the stream itself. */
  volatile boolean holdResigns;
  /** Set: every new Campaign stream ends with this status at its first request (no replica up). */
  volatile Status refuseCampaign;

  @Override
  public StreamObserver<CampaignRequest> campaign(StreamObserver<CampaignResponse> responses) {
    Candidate candidate = new Candidate(responses);
    candidates.add(candidate);
    return new StreamObserver<>() {
      @Override
      public void onNext(CampaignRequest request) {
        boolean first = candidate.requests.isEmpty();
        candidate.requests.add(request);
        if (first && refuseCampaign != null) {
          candidate.end(refuseCampaign);
          return;
        }
        if (first && request.getResume()) {
          if (refuseResume != null) {
            candidate.end(refuseResume);
            return;
          }
          if (termOnResume != 0) {
            candidate.leadingTerm = termOnResume;
          }
        }
        long term = candidate.leadingTerm;
        if (term != 0) {
          candidate.answer(term, request.getSequence(), request.getValue(), candidate.validity);
        }
      }

      @Override
      public void onError(Throwable t) {
        candidate.cancelled = true;
      }

      @Override
      public void onCompleted() {
        candidate.halfClosed = true;
        if (!holdResigns) {
          candidate.end(Status.OK);
        }
      }
    };
  }

  @Override
  public void leader(LeaderRequest request, StreamObserver<LeaderResponse> responses) {
    Status failure = failNextLeader.poll();
    if (failure != null) {
      responses.onError(failure.asRuntimeException());
      return;
    }
    dev.redlockd.client.Leader now = leader;
    LeaderResponse.Builder answer = LeaderResponse.newBuilder();
    if (now != null) {
      answer.setLeader(Leadership.newBuilder().setValue(now.value()).setTerm(now.term()));
    }
    responses.onNext(answer.build());
    responses.onCompleted();
  }

  @Override
  public void observe(ObserveRequest request, StreamObserver<ObserveResponse> responses) {
    observers.add(responses);
  }

  static ObserveResponse state(String value, long term) {
    return value == null ? ObserveResponse.getDefaultInstance()
        : ObserveResponse.newBuilder().setLeader(Leadership.newBuilder().setValue(value).setTerm(term)).build();
  }
}
