package dev.redlockd.it.keepalive;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.fromProto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.BlackholeProxy;
import dev.redlockd.it.support.FreePort;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Scrape;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Replica A reaches 3 of the 5 Redis nodes through proxies that then stop forwarding (the
 * connections stay open), so A sees 2 nodes while replica B sees all 5. A kept lease and a
 * leadership streaming through A are handed on: A ends their streams UNAVAILABLE, releasing
 * nothing, while half their validity is still left, and they resume through B with the same
 * fencing token and term. A resume through A meanwhile is handed on at its first missed renewal
 * (A's node monitor sees no quorum), so that the holder's next reopen goes on to B in time. Real Redis, both replicas over real
 * sockets, raw stubs.
 */
class ReplicaWithoutQuorumTest {
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Duration NODE_TIMEOUT = Duration.ofMillis(250);
  private static RedisCluster cluster;
  private static final List<BlackholeProxy> proxies = new ArrayList<>();
  private static RedlockdServer a;
  private static RedlockdServer b;
  private static int metricsA;
  private static ManagedChannel toA;
  private static ManagedChannel toB;

  @BeforeAll
  static void start() throws Exception {
    cluster = RedisCluster.start(5);
    List<String> viaProxies = new ArrayList<>();
    for (int node = 0; node < 5; node++) {
      int port = cluster.node(node).port();
      if (node < 3) {
        BlackholeProxy proxy = new BlackholeProxy(port);
        proxies.add(proxy);
        port = proxy.port();
      }
      viaProxies.add("redis://127.0.0.1:" + port);
    }
    metricsA = FreePort.pick();
    // A roomy node timeout: on a busy test machine a healthy node may miss 50 ms, and this test is
    // about nodes that never answer.
    a = RedlockdServer.start(ServerConfig.parse("--port", "0", "--redis", String.join(",", viaProxies),
        "--metrics-port", Integer.toString(metricsA), "--node-timeout", NODE_TIMEOUT.toMillis() + "ms"));
    b = RedlockdServer.start(ServerConfig.parse("--port", "0", "--redis", cluster.redisFlag(),
        "--node-timeout", NODE_TIMEOUT.toMillis() + "ms"));
    toA = channel(a);
    toB = channel(b);
  }

  @AfterAll
  static void stop() throws Exception {
    for (ManagedChannel c : new ManagedChannel[] {toA, toB}) {
      if (c != null) {
        c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    for (AutoCloseable closing : new AutoCloseable[] {a, b}) {
      if (closing != null) {
        closing.close();
      }
    }
    for (BlackholeProxy proxy : proxies) {
      proxy.close();
    }
    cluster.close();
  }

  @Test
  void aKeptLeaseAndALeadershipThroughAReplicaCutOffFromAQuorumResumeThroughAnotherWithTheirFenceAndTerm()
      throws Exception {
    String r = "minority-lease";
    String election = "minority-leader";
    String candidate = "cccccccccccccccccccccccccccccccc";
    LockServiceGrpc.LockServiceBlockingStub viaB = LockServiceGrpc.newBlockingStub(toB);
    Lease lease = viaB.acquire(acquireRequest(r, TTL, Duration.ZERO, "")).getLease();

    StreamProbe kept = StreamProbe.open(LockServiceGrpc.newStub(toA));
    long keptSent = System.nanoTime();
    kept.send(r, lease.getToken(), TTL, 1);
    KeepAliveResponse held = kept.next(Duration.ofSeconds(2));
    assertThat(held.getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    long leaseDeadline = keptSent + fromProto(held.getLease().getValidity()).toNanos();

    CampaignProbe leader = CampaignProbe.open(ElectionServiceGrpc.newStub(toA));
    long leaderSent = System.nanoTime();
    leader.send(election, "a", TTL, candidate, false, 1);
    CampaignResponse leading = leader.next(Duration.ofSeconds(2));
    long term = leading.getTerm();
    long leadershipDeadline = leaderSent + fromProto(leading.getValidity()).toNanos();

    proxies.forEach(BlackholeProxy::blackhole); // A now reaches 2 of the 5 nodes; B reaches all
    // The clients' requests every ttl/4 go on: each renewal misses the quorum and is answered JEOPARDY.
    long sequence = 2;
    long giveUp = System.nanoTime() + 2 * TTL.toNanos();
    while ((!kept.end.isDone() || !leader.end.isDone()) && System.nanoTime() < giveUp) {
      if (!kept.end.isDone()) {
        kept.send(r, lease.getToken(), TTL, sequence);
      }
      if (!leader.end.isDone()) {
        leader.send(election, "a", TTL, candidate, false, sequence);
      }
      sequence++;
      endOrPeriod(kept.end, leader.end, TTL.dividedBy(4));
    }
    long keptEnded = kept.endedAt;
    long leaderEnded = leader.endedAt;
    Status keptEnd = kept.awaitEnd(Duration.ofSeconds(1));
    assertThat(keptEnd.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(keptEnd.getDescription()).contains("no quorum").contains("nothing was released");
    assertThat(leader.end.get(1, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    List<KeepAliveResponse> answers = new ArrayList<>();
    kept.responses.drainTo(answers);
    assertThat(answers).extracting(KeepAliveResponse::getState).contains(LeaseState.LEASE_STATE_JEOPARDY);
    // Handed on while the holder still held it (without the hand-on the stream ends only once the
    // validity has run out), early enough to resume elsewhere before the deadline (checked below).
    assertThat(keptEnded).isLessThan(leaseDeadline);
    assertThat(leaderEnded).isLessThan(leadershipDeadline);

    // Resuming through A again (round_robin may pick it) is handed on at its first miss, since A's
    // node monitor sees no quorum, nothing released: without that, only after the retry missed too
    // (a node timeout, a tenth of the ttl, a node timeout), time the holder needs to reach B.
    Duration retried = NODE_TIMEOUT.multipliedBy(2).plus(TTL.dividedBy(10));
    // Both grants at once, each through A and then on to B, as their holders would: a test that
    // took them one after the other put the leadership's attempt through A into the lease's time to
    // B, and on a slow machine the lease reached B 12 ms after its deadline.
    StreamProbe again = StreamProbe.open(LockServiceGrpc.newStub(toA));
    CampaignProbe leaderAgain = CampaignProbe.open(ElectionServiceGrpc.newStub(toA));
    long resentAt = System.nanoTime();
    again.send(r, lease.getToken(), TTL, sequence);
    leaderAgain.send(election, "a", TTL, candidate, true, sequence);
    Status handedOn = again.awaitEnd(Duration.ofSeconds(2));
    Status leaderHandedOn = leaderAgain.end.get(2, TimeUnit.SECONDS);
    StreamProbe resumed = StreamProbe.open(LockServiceGrpc.newStub(toB));
    CampaignProbe back = CampaignProbe.open(ElectionServiceGrpc.newStub(toB));
    resumed.send(r, lease.getToken(), TTL, sequence);
    back.send(election, "a", TTL, candidate, true, sequence);
    KeepAliveResponse renewed = resumed.next(Duration.ofSeconds(2));
    assertThat(System.nanoTime()).isLessThan(leaseDeadline);
    CampaignResponse leadingAgain = back.next(Duration.ofSeconds(2));
    assertThat(System.nanoTime()).isLessThan(leadershipDeadline);

    assertThat(handedOn.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(handedOn.getDescription()).contains("no quorum").contains("nothing was released");
    assertThat(again.endedAt - resentAt).isLessThan(retried.toNanos());
    assertThat(again.responses).isEmpty();
    assertThat(leaderHandedOn.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(leaderHandedOn.getDescription()).contains("no quorum");
    assertThat(leaderAgain.endedAt - resentAt).isLessThan(retried.toNanos());

    assertThat(renewed.getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    assertThat(renewed.getLease().getFencingToken()).isEqualTo(lease.getFencingToken());
    assertThat(leadingAgain.getTerm()).isEqualTo(term);
    assertThat(leadingAgain.getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);

    // Never released: nobody else could take either meanwhile, and a quorum holds the lease's token.
    assertThat(codeOf(() -> viaB.acquire(acquireRequest(r, TTL, Duration.ZERO, "")))).isEqualTo(Status.Code.ABORTED);
    int holding = 0;
    for (int node = 0; node < 5; node++) {
      holding += lease.getToken().equals(cluster.lockHolder(node, "redlock:{" + r + "}:lock")) ? 1 : 0;
    }
    assertThat(holding).isGreaterThanOrEqualTo(3);
    Scrape metrics = Scrape.of(metricsA);
    assertThat(metrics.value("redlockd_kept_streams_stopped_total", "stream", "KeepAlive", "reason", "no_quorum"))
        .isEqualTo(2);
    assertThat(metrics.value("redlockd_kept_streams_stopped_total", "stream", "Campaign", "reason", "no_quorum"))
        .isEqualTo(2);

    resumed.halfClose();
    assertThat(resumed.awaitEnd(Duration.ofSeconds(2)).getCode()).isEqualTo(Status.Code.OK);
    back.halfClose();
    assertThat(back.end.get(2, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
  }

  private static Status.Code codeOf(Runnable call) {
    try {
      call.run();
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  private static ManagedChannel channel(RedlockdServer server) {
    return Grpc.newChannelBuilder("127.0.0.1:" + server.port(), InsecureChannelCredentials.create()).build();
  }

  /**
   * Until {@code period} has passed or one of the streams not ended yet ends: a client sends its
   * next request a period on, but resumes a stream that ended at once.
   */
  private static void endOrPeriod(CompletableFuture<Status> first, CompletableFuture<Status> second, Duration period)
      throws InterruptedException {
    CompletableFuture<?>[] open = java.util.stream.Stream.of(first, second).filter(f -> !f.isDone())
        .toArray(CompletableFuture[]::new);
    if (open.length == 0) {
      return; // anyOf() of nothing never completes
    }
    try {
      CompletableFuture.anyOf(open).get(period.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // the period is over, or a stream ended (how is checked by the caller)
    }
  }
}
