package dev.redlockd.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerFlags;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Observe under flow control, on a whole server (in-process transport, real Redis nodes): one
 * observer that never reads holds up none of the others, and what waits for it is the latest
 * state only, not a queue of every change.
 */
class ObserveFlowControlTest {
  private static final int OBSERVERS = 1_000;
  private static final int CHANGES = 10;
  /**
   * Measured from the Campaign send, so it includes a proclaim round on 3 Redis nodes and the
   * pub/sub notice: about 20 ms on a quiet machine, and 120 ms was seen with two dozen builds
   * beside it. An observer held up by the stuck one would wait for the whole test (it reads
   * only at the end), so a second still tells the two apart, on any machine.
   */
  private static final Duration PROMPTLY = Duration.ofSeconds(1);
  private static final String ELECTION = "flow";

  private static RedisCluster cluster;
  private static RedlockdServer server;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() throws IOException {
    cluster = RedisCluster.start(3);
    server = RedlockdServer.start(ServerConfig.parse(ServerFlags.forTest("--redis", cluster.redisFlag())),
        InProcessServerBuilder.forName("observe-flow"));
    channel = InProcessChannelBuilder.forName("observe-flow").directExecutor().build();
  }

  @AfterAll
  static void stop() {
    if (channel != null) {
      channel.shutdownNow();
    }
    if (server != null) {
      server.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** An observer that reads every answer as it comes, noting when each value arrived. */
  static final class Reader implements StreamObserver<ObserveResponse> {
    final ConcurrentHashMap<String, Long> arrived = new ConcurrentHashMap<>();

    @Override
    public void onNext(ObserveResponse response) {
      arrived.putIfAbsent(response.hasLeader() ? response.getLeader().getValue() : "", System.nanoTime());
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  }

  /** An observer that requests no message until told to: its stream is never ready on the server. */
  static final class Stuck implements ClientResponseObserver<ObserveRequest, ObserveResponse> {
    final List<String> received = new CopyOnWriteArrayList<>();
    volatile ClientCallStreamObserver<ObserveRequest> call;

    @Override
    public void beforeStart(ClientCallStreamObserver<ObserveRequest> requestStream) {
      call = requestStream;
      requestStream.disableAutoRequestWithInitial(0);
    }

    @Override
    public void onNext(ObserveResponse response) {
      received.add(response.hasLeader() ? response.getLeader().getValue() : "");
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  }

  @Test
  void oneObserverThatNeverReadsHoldsUpNoneOfTheOthersAndOnlyTheLatestStateWaitsForIt() throws Exception {
    ElectionServiceGrpc.ElectionServiceStub stub = ElectionServiceGrpc.newStub(channel);
    ObserveRequest observe = ObserveRequest.newBuilder().setElection(ELECTION).build();
    Stuck stuck = new Stuck();
    stub.observe(observe, stuck);
    List<Reader> readers = new ArrayList<>();
    for (int i = 1; i < OBSERVERS; i++) {
      Reader reader = new Reader();
      readers.add(reader);
      stub.observe(observe, reader);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> readers.stream().allMatch(r -> r.arrived.containsKey("")));

    CompletableFuture<Void> firstAnswer = new CompletableFuture<>();
    StreamObserver<CampaignRequest> campaign = stub.campaign(new StreamObserver<CampaignResponse>() {
      @Override
      public void onNext(CampaignResponse response) {
        firstAnswer.complete(null);
      }

      @Override
      public void onError(Throwable t) {
        firstAnswer.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {}
    });
    long[] sent = new long[CHANGES + 1];
    sent[0] = System.nanoTime();
    campaign.onNext(CampaignRequest.newBuilder().setElection(ELECTION).setValue("v0")
        .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(10)).build());
    firstAnswer.get(10, TimeUnit.SECONDS);
    awaitEveryReader(readers, "v0");
    for (int change = 1; change <= CHANGES; change++) {
      String value = "v" + change;
      sent[change] = System.nanoTime();
      campaign.onNext(CampaignRequest.newBuilder().setElection(ELECTION).setValue(value).setSequence(change).build());
      awaitEveryReader(readers, value);
    }
    for (int change = 1; change <= CHANGES; change++) {
      String value = "v" + change;
      long start = sent[change];
      long slowest = readers.stream().mapToLong(r -> r.arrived.get(value) - start).max().orElseThrow();
      assertThat(Duration.ofNanos(slowest)).as("the last of %d observers to see %s", OBSERVERS - 1, value)
          .isLessThan(PROMPTLY);
    }

    assertThat(stuck.received).as("nothing reaches an observer that requested nothing").isEmpty();
    stuck.call.request(100);
    String last = "v" + CHANGES;
    await().atMost(Duration.ofSeconds(10)).until(() -> stuck.received.contains(last));
    assertThat(stuck.received).as("the latest state waited for it, not every change").containsExactly(last);
    campaign.onCompleted();
  }

  private static void awaitEveryReader(List<Reader> readers, String value) {
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
        .until(() -> readers.stream().allMatch(r -> r.arrived.containsKey(value)));
  }
}
