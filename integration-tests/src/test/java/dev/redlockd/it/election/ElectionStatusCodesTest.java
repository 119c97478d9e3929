package dev.redlockd.it.election;

import static dev.redlockd.it.support.LiveServer.codeOf;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bad election requests get INVALID_ARGUMENT naming what is wrong, and change nothing. */
class ElectionStatusCodesTest {
  private static LiveServer live;
  private static ElectionServiceGrpc.ElectionServiceBlockingStub blocking;
  private static ElectionServiceGrpc.ElectionServiceStub async;

  @BeforeAll
  static void start() throws Exception {
    live = new LiveServer(3, "--max-streams", "4");
    blocking = ElectionServiceGrpc.newBlockingStub(live.channel());
    async = ElectionServiceGrpc.newStub(live.channel());
  }

  @AfterAll
  static void stop() throws Exception {
    live.close();
  }

  @Test
  void leaderOfABadElectionNameIsInvalidArgumentAndOfAVacantOneIsEmpty() {
    Status empty = codeOf(() -> blocking.leader(LeaderRequest.newBuilder().setElection("").build()));
    assertThat(empty.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(empty.getDescription()).isEqualTo("election must not be empty");
    Status tooLong = codeOf(() -> blocking.leader(LeaderRequest.newBuilder().setElection("x".repeat(513)).build()));
    assertThat(tooLong.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(blocking.leader(LeaderRequest.newBuilder().setElection("nobody-campaigns").build()).hasLeader())
        .isFalse();
  }

  @Test
  void aCampaignWithoutTtlOrWithAnOverlongValueEndsInvalidArgumentAndLeadsNothing() throws Exception {
    Status noTtl = campaign(CampaignRequest.newBuilder().setElection("bad").setValue("v").build());
    assertThat(noTtl.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(noTtl.getDescription()).isEqualTo("election 'bad': ttl is required");
    Status longValue = campaign(CampaignRequest.newBuilder().setElection("bad").setValue("v".repeat(257))
        .setTtl(proto(Duration.ofSeconds(5))).build());
    assertThat(longValue.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(longValue.getDescription()).isEqualTo("election 'bad': value is 257 bytes long, the limit is 256");
    Status zeroTtl = campaign(CampaignRequest.newBuilder().setElection("bad").setValue("v")
        .setTtl(proto(Duration.ZERO)).build());
    assertThat(zeroTtl.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(blocking.leader(LeaderRequest.newBuilder().setElection("bad").build()).hasLeader()).isFalse();
  }

  @Test
  void aLaterRequestNamingAnotherElectionEndsTheCampaignWithoutResigning() throws Exception {
    Ending<CampaignResponse> campaign = new Ending<>();
    StreamObserver<CampaignRequest> requests = async.campaign(campaign);
    requests.onNext(CampaignRequest.newBuilder().setElection("one").setValue("me").setTtl(proto(Duration.ofSeconds(5)))
        .build());
    assertThat(campaign.first.get(5, TimeUnit.SECONDS).getValue()).isEqualTo("me");
    requests.onNext(CampaignRequest.newBuilder().setElection("two").setValue("me").build());
    Status status = campaign.status.get(5, TimeUnit.SECONDS);
    assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(status.getDescription()).contains("one candidacy");
    // Not resigned: its leader may believe it leads until it reads the status (rule 1); the
    // leadership runs out at its ttl, or its leader gives it back.
    assertThat(blocking.leader(LeaderRequest.newBuilder().setElection("one").build()).getLeader().getValue())
        .as("the refused stream's leadership is left to run out").isEqualTo("me");
  }

  @Test
  void observeOfABadNameIsInvalidArgumentAndPastMaxStreamsResourceExhausted() throws Exception {
    assertThat(observe("").get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    io.grpc.Context.CancellableContext held = io.grpc.Context.current().withCancellation();
    try {
      for (int i = 0; i < 4; i++) {
        held.run(() -> observe("crowded"));
      }
      Thread.sleep(200);
      assertThat(observe("crowded").get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    } finally {
      held.cancel(null);
    }
  }

  private static CompletableFuture<Status> observe(String election) {
    Ending<ObserveResponse> observation = new Ending<>();
    async.observe(ObserveRequest.newBuilder().setElection(election).build(), observation);
    return observation.status;
  }

  private static Status campaign(CampaignRequest first) throws Exception {
    Ending<CampaignResponse> campaign = new Ending<>();
    async.campaign(campaign).onNext(first);
    Status status = campaign.status.get(5, TimeUnit.SECONDS);
    assertThat(campaign.first).as("led with a refused request").isNotDone();
    return status;
  }

  /** A stream's first answer and how it ended. */
  private static final class Ending<T> implements StreamObserver<T> {
    final CompletableFuture<T> first = new CompletableFuture<>();
    final CompletableFuture<Status> status = new CompletableFuture<>();

    @Override
    public void onNext(T value) {
      first.complete(value);
    }

    @Override
    public void onError(Throwable t) {
      status.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      status.complete(Status.OK);
    }
  }
}
