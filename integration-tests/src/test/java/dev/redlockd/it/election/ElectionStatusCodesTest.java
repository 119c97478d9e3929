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
  void aLaterRequestNamingAnotherElectionEndsTheCampaignAndResigns() throws Exception {
    CompletableFuture<CampaignResponse> led = new CompletableFuture<>();
    CompletableFuture<Status> ended = new CompletableFuture<>();
    StreamObserver<CampaignRequest> requests = async.campaign(new StreamObserver<>() {
      @Override
      public void onNext(CampaignResponse value) {
        led.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        ended.complete(Status.fromThrowable(t));
      }

      @Override
      public void onCompleted() {
        ended.complete(Status.OK);
      }
    });
    requests.onNext(CampaignRequest.newBuilder().setElection("one").setValue("me").setTtl(proto(Duration.ofSeconds(5)))
        .build());
    assertThat(led.get(5, TimeUnit.SECONDS).getValue()).isEqualTo("me");
    requests.onNext(CampaignRequest.newBuilder().setElection("two").setValue("me").build());
    Status status = ended.get(5, TimeUnit.SECONDS);
    assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(status.getDescription()).contains("one candidacy");
    assertThat(blocking.leader(LeaderRequest.newBuilder().setElection("one").build()).hasLeader())
        .as("the refused stream resigned").isFalse();
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
    CompletableFuture<Status> ended = new CompletableFuture<>();
    async.observe(ObserveRequest.newBuilder().setElection(election).build(), new StreamObserver<ObserveResponse>() {
      @Override
      public void onNext(ObserveResponse value) {}

      @Override
      public void onError(Throwable t) {
        ended.complete(Status.fromThrowable(t));
      }

      @Override
      public void onCompleted() {
        ended.complete(Status.OK);
      }
    });
    return ended;
  }

  private static Status campaign(CampaignRequest first) throws Exception {
    CompletableFuture<Status> ended = new CompletableFuture<>();
    StreamObserver<CampaignRequest> requests = async.campaign(new StreamObserver<>() {
      @Override
      public void onNext(CampaignResponse value) {
        ended.completeExceptionally(new AssertionError("led with a refused request: " + value));
      }

      @Override
      public void onError(Throwable t) {
        ended.complete(Status.fromThrowable(t));
      }

      @Override
      public void onCompleted() {
        ended.complete(Status.OK);
      }
    });
    requests.onNext(first);
    return ended.get(5, TimeUnit.SECONDS);
  }
}
