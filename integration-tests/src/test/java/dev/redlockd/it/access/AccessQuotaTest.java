package dev.redlockd.it.access;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Per-identity limits reached on the real server process while another identity is still served. */
class AccessQuotaTest {
  private static final String POLICY = """
      {"version": 1, "identities": [
        {"identity": "holder", "lock": ["h/"], "limits": {"held_leases": 2}},
        {"identity": "streamer", "lock": ["s/"], "limits": {"keepalive_streams": 1}},
        {"identity": "waiter", "lock": ["w/"], "limits": {"waiting_acquires": 1}},
        {"identity": "voter", "lock": ["v/"], "describe": ["v/"], "limits": {"election_streams": 2}},
        {"identity": "other", "lock": [""], "describe": [""]}
      ]}
      """;

  @TempDir
  static Path dir;
  private static RedisCluster cluster;
  private static ServerProcess server;
  private static final Tenant holder = Tenant.named("holder");
  private static final Tenant streamer = Tenant.named("streamer");
  private static final Tenant waiter = Tenant.named("waiter");
  private static final Tenant other = Tenant.named("other");
  private static final Tenant voter = Tenant.named("voter");

  @BeforeAll
  static void start() throws Exception {
    cluster = RedisCluster.start(3);
    Path policy = Files.writeString(dir.resolve("policy.json"), POLICY);
    Path tokens = Files.writeString(dir.resolve("tokens"), String.join("\n", holder.tokenLine(),
        streamer.tokenLine(), waiter.tokenLine(), other.tokenLine(), voter.tokenLine()) + "\n");
    server = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", "250ms", "--bind", "127.0.0.1",
        "--policy", policy.toString(), "--tokens", tokens.toString());
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
    cluster.close();
  }

  private static Lease acquire(Tenant who, String resource, String token) {
    return who.locks(server.channel()).acquire(acquireRequest(resource, Duration.ofSeconds(20), Duration.ZERO,
        token)).getLease();
  }

  private static void release(Tenant who, Lease lease) {
    assertThat(who.locks(server.channel()).release(ReleaseRequest.newBuilder().setResource(lease.getResource())
        .setToken(lease.getToken()).build()).getReleased()).isTrue();
  }

  private static void assertExhausted(Status status, Tenant who, String what) {
    assertThat(status.getCode()).as(status.toString()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(status.getDescription()).contains("'" + who.identity() + "'", what).doesNotContain(who.token());
  }

  @Test
  void heldLeases() {
    Lease first = acquire(holder, "h/1", "");
    Lease second = acquire(holder, "h/2", "clientMadeToken_0123456789abc");
    assertExhausted(codeOf(() -> acquire(holder, "h/3", "")), holder, "limit of 2 held leases");
    // Retrying an Acquire with the token of a lease it holds is a refresh, not one more lease.
    assertThat(acquire(holder, "h/2", "clientMadeToken_0123456789abc").getFencingToken())
        .isEqualTo(second.getFencingToken());
    Lease others = acquire(other, "h/other", "");
    release(holder, first);
    Lease third = acquire(holder, "h/3", "");
    release(holder, second);
    release(holder, third);
    release(other, others);
  }

  @Test
  void keepAliveStreams() throws Exception {
    Lease kept = acquire(streamer, "s/1", "");
    StreamEnd<KeepAliveResponse> open = new StreamEnd<>();
    StreamObserver<KeepAliveRequest> requests = streamer.asyncLocks(server.channel()).keepAlive(open);
    requests.onNext(KeepAliveRequest.newBuilder().setResource("s/1").setToken(kept.getToken())
        .setTtl(proto(Duration.ofSeconds(5))).build());
    assertThat(open.next(10)).isNotNull();

    Lease second = acquire(streamer, "s/2", "");
    StreamEnd<KeepAliveResponse> refused = new StreamEnd<>();
    streamer.asyncLocks(server.channel()).keepAlive(refused).onNext(KeepAliveRequest.newBuilder()
        .setResource("s/2").setToken(second.getToken()).setTtl(proto(Duration.ofSeconds(5))).build());
    assertExhausted(refused.status(10), streamer, "limit of 1 KeepAlive streams");

    Lease others = acquire(other, "s/other", "");
    StreamEnd<KeepAliveResponse> othersStream = new StreamEnd<>();
    StreamObserver<KeepAliveRequest> othersRequests = other.asyncLocks(server.channel()).keepAlive(othersStream);
    othersRequests.onNext(KeepAliveRequest.newBuilder().setResource("s/other").setToken(others.getToken())
        .setTtl(proto(Duration.ofSeconds(5))).build());
    assertThat(othersStream.next(10)).as("another identity still keeps its lease alive").isNotNull();

    requests.onCompleted(); // releases s/1 and gives the stream back
    assertThat(open.status(10).isOk()).isTrue();
    StreamEnd<KeepAliveResponse> again = new StreamEnd<>();
    StreamObserver<KeepAliveRequest> againRequests = streamer.asyncLocks(server.channel()).keepAlive(again);
    againRequests.onNext(KeepAliveRequest.newBuilder().setResource("s/2").setToken(second.getToken())
        .setTtl(proto(Duration.ofSeconds(5))).build());
    assertThat(again.next(10)).isNotNull();
    againRequests.onCompleted();
    othersRequests.onCompleted();
    assertThat(again.status(10).isOk()).isTrue();
    assertThat(othersStream.status(10).isOk()).isTrue();
  }

  @Test
  void waitingAcquires() throws Exception {
    Lease busy = acquire(waiter, "w/busy", "");
    StreamEnd<AcquireResponse> waiting = new StreamEnd<>();
    waiter.asyncLocks(server.channel()).acquire(acquireRequest("w/busy", Duration.ofSeconds(20),
        Duration.ofSeconds(15), ""), waiting);
    Thread.sleep(300); // the first waiter is under way
    assertExhausted(codeOf(() -> waiter.locks(server.channel()).acquire(acquireRequest("w/busy",
        Duration.ofSeconds(20), Duration.ofSeconds(5), ""))), waiter, "limit of 1 waiting Acquire calls");
    // One attempt (no wait) is not a waiting call: it is answered ABORTED, not refused.
    assertThat(codeOf(() -> acquire(waiter, "w/busy", "")).getCode()).isEqualTo(Status.Code.ABORTED);

    Lease others = acquire(other, "w/others", "");
    StreamEnd<AcquireResponse> othersWaiting = new StreamEnd<>();
    other.asyncLocks(server.channel()).acquire(acquireRequest("w/others", Duration.ofSeconds(20),
        Duration.ofSeconds(15), ""), othersWaiting);
    Thread.sleep(300);
    assertThat(othersWaiting.end.isDone()).as("another identity still waits").isFalse();

    release(waiter, busy);
    AcquireResponse granted = waiting.next(10);
    assertThat(granted).as("the first waiter gets the lock").isNotNull();
    release(other, others);
    AcquireResponse othersGranted = othersWaiting.next(10);
    assertThat(othersGranted).isNotNull();
    release(waiter, granted.getLease());
    release(other, othersGranted.getLease());
    // The waiting slot was given back with the grant.
    Lease again = acquire(waiter, "w/again", "");
    StreamEnd<AcquireResponse> waitsAgain = new StreamEnd<>();
    waiter.asyncLocks(server.channel()).acquire(acquireRequest("w/again", Duration.ofSeconds(20),
        Duration.ofSeconds(15), ""), waitsAgain);
    release(waiter, again);
    AcquireResponse grantedAgain = waitsAgain.next(10);
    assertThat(grantedAgain).isNotNull();
    release(waiter, grantedAgain.getLease());
  }

  /**
   * Campaign and Observe streams count against the identity's election_streams, so that no
   * identity takes every --max-streams slot.
   */
  @Test
  void campaignAndObserveStreams() throws Exception {
    StreamEnd<CampaignResponse> campaign = new StreamEnd<>();
    StreamObserver<CampaignRequest> candidate = voter.asyncElections(server.channel()).campaign(campaign);
    candidate.onNext(CampaignRequest.newBuilder().setElection("v/e").setValue("v-1")
        .setTtl(proto(Duration.ofSeconds(5))).build());
    assertThat(campaign.next(10)).isNotNull();
    StreamEnd<ObserveResponse> observe = new StreamEnd<>();
    voter.asyncElections(server.channel()).observe(ObserveRequest.newBuilder().setElection("v/e").build(), observe);
    assertThat(observe.next(10)).isNotNull();

    StreamEnd<ObserveResponse> thirdObserve = new StreamEnd<>();
    voter.asyncElections(server.channel()).observe(ObserveRequest.newBuilder().setElection("v/e").build(),
        thirdObserve);
    assertExhausted(thirdObserve.status(10), voter, "limit of 2 Campaign and Observe streams");
    StreamEnd<CampaignResponse> thirdCampaign = new StreamEnd<>();
    voter.asyncElections(server.channel()).campaign(thirdCampaign).onNext(CampaignRequest.newBuilder()
        .setElection("v/other").setValue("v-2").setTtl(proto(Duration.ofSeconds(5))).build());
    assertExhausted(thirdCampaign.status(10), voter, "limit of 2 Campaign and Observe streams");

    StreamEnd<ObserveResponse> othersObserve = new StreamEnd<>();
    other.asyncElections(server.channel()).observe(ObserveRequest.newBuilder().setElection("v/e").build(),
        othersObserve);
    assertThat(othersObserve.next(10)).as("another identity still observes").isNotNull();

    candidate.onCompleted(); // resigns and gives the stream back
    assertThat(campaign.status(10).isOk()).isTrue();
    StreamEnd<ObserveResponse> again = new StreamEnd<>();
    voter.asyncElections(server.channel()).observe(ObserveRequest.newBuilder().setElection("v/e").build(), again);
    assertThat(again.next(10)).isNotNull();
  }
}
