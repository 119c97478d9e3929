package dev.redlockd.it.keepalive;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.testing.Scrape;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A client that stops sending on its kept stream without closing it (frozen, or cut off by a
 * partition that leaves the connection open) can no longer move its own deadline past the send
 * time of its last request plus the ttl. So the server stops renewing for it once it has been
 * silent that long: the stream ends DEADLINE_EXCEEDED, nothing is released, and the key runs out
 * at its ttl on the nodes, after which someone else gets it. Raw stubs over a real socket, real
 * Redis: the key's PTTL on the nodes shows it.
 */
class SilentReaderTest {
  private static final Duration TTL = Duration.ofSeconds(1);
  /** A request every ttl/4, as the clients send them. */
  private static final Duration PERIOD = TTL.dividedBy(4);
  private static LiveServer h;
  private static int metricsPort;

  @BeforeAll
  static void start() throws Exception {
    metricsPort = freePort();
    h = new LiveServer(3, "--metrics-port", Integer.toString(metricsPort));
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @Test
  void aKeepAliveStreamSilentForLongerThanTheTtlIsNoLongerRenewedAndItsLeaseRunsOut() throws Exception {
    String r = "silent-reader-lease";
    String key = "redlock:{" + r + "}:lock";
    Lease lease = h.acquire(r, TTL);
    StreamProbe probe = StreamProbe.open(h.async);
    long lastSent = 0;
    for (int sequence = 1; sequence <= 6; sequence++) { // 1.5 ttl of a client that talks: held
      probe.send(r, lease.getToken(), TTL, sequence);
      lastSent = System.nanoTime();
      Thread.sleep(PERIOD.toMillis());
    }
    assertThat(probe.end).isNotDone();

    Status end = probe.awaitEnd(Duration.ofSeconds(5));
    long endedAt = System.nanoTime();
    assertThat(end.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(end.getDescription()).contains("nothing was released");
    // Never while the client could still count on a renewal: not before one ttl of silence.
    assertThat(endedAt - lastSent).isGreaterThan(TTL.toNanos());

    assertRunsOutWithoutBeingReleased(key, lease.getToken());
    Lease next = h.blocking.acquire(acquireRequest(r, TTL, Duration.ZERO, "")).getLease();
    assertThat(next.getFencingToken()).isGreaterThan(lease.getFencingToken());
    assertThat(stopped("KeepAlive")).isEqualTo(1);
  }

  @Test
  void aCampaignStreamSilentForLongerThanTheTtlIsNoLongerRenewedAndItsLeadershipRunsOut() throws Exception {
    String election = "silent-reader-leader";
    String key = "redlock:election:{" + election + "}:lock";
    ElectionServiceGrpc.ElectionServiceStub elections = ElectionServiceGrpc.newStub(h.channel);
    RawCampaign leader = RawCampaign.open(elections);
    long lastSent = 0;
    for (int sequence = 1; sequence <= 6; sequence++) {
      leader.send(election, "a", sequence);
      lastSent = System.nanoTime();
      Thread.sleep(PERIOD.toMillis());
    }
    long term = leader.leading.get(5, TimeUnit.SECONDS).getTerm();
    assertThat(leader.end).isNotDone();
    String token = leaderToken(key);

    Status end = leader.end.get(5, TimeUnit.SECONDS);
    long endedAt = System.nanoTime();
    assertThat(end.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(endedAt - lastSent).isGreaterThan(TTL.toNanos());

    assertRunsOutWithoutBeingReleased(key, token);
    RawCampaign next = RawCampaign.open(elections);
    next.send(election, "b", 1);
    assertThat(next.leading.get(5, TimeUnit.SECONDS).getTerm()).isGreaterThan(term);
    next.halfClose();
    assertThat(stopped("Campaign")).isEqualTo(1);
  }

  /**
   * Right after the stream ended, a quorum still holds the key under the old token with a
   * positive PTTL of at most the ttl (renewals stopped; nothing deleted it), and it stays held
   * until that runs out; then no node holds it.
   */
  private static void assertRunsOutWithoutBeingReleased(String key, String token) throws InterruptedException {
    long deadline = System.nanoTime() + 2 * TTL.toNanos();
    int held = 0;
    long longest = 0;
    for (int node = 0; node < h.cluster.size(); node++) {
      long pttl = (Long) h.cluster.call(node, "PTTL", key);
      if (token.equals(h.cluster.lockHolder(node, key))) {
        held++;
        assertThat(pttl).isBetween(1L, TTL.toMillis());
        longest = Math.max(longest, pttl);
      }
    }
    assertThat(held).as("nodes still holding the key when the stream ended").isGreaterThanOrEqualTo(2);
    Thread.sleep(Math.max(0, longest - 50));
    while (System.nanoTime() < deadline && holders(key) > 0) {
      Thread.sleep(20);
    }
    assertThat(holders(key)).as("nodes holding the key after its PTTL ran out").isZero();
  }

  private static int holders(String key) {
    int n = 0;
    for (int node = 0; node < h.cluster.size(); node++) {
      n += h.cluster.get(node, key) == null ? 0 : 1;
    }
    return n;
  }

  private static String leaderToken(String key) {
    for (int node = 0; node < h.cluster.size(); node++) {
      String holder = h.cluster.lockHolder(node, key);
      if (holder != null) {
        return holder;
      }
    }
    throw new AssertionError("no node holds " + key);
  }

  private static double stopped(String stream) {
    return Scrape.of(metricsPort).value("redlockd_kept_streams_stopped_total", "stream", stream, "reason",
        "reader_silent");
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /** A raw Campaign stream: its first leading answer and how it ended. */
  private static final class RawCampaign implements ClientResponseObserver<CampaignRequest, CampaignResponse> {
    final CompletableFuture<CampaignResponse> leading = new CompletableFuture<>();
    final CompletableFuture<Status> end = new CompletableFuture<>();
    private volatile ClientCallStreamObserver<CampaignRequest> requests;

    static RawCampaign open(ElectionServiceGrpc.ElectionServiceStub stub) {
      RawCampaign campaign = new RawCampaign();
      stub.campaign(campaign);
      return campaign;
    }

    void send(String election, String value, long sequence) {
      requests.onNext(CampaignRequest.newBuilder().setElection(election).setValue(value).setTtl(proto(TTL))
          .setSequence(sequence).build());
    }

    void halfClose() {
      requests.onCompleted();
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<CampaignRequest> requestStream) {
      requests = requestStream;
    }

    @Override
    public void onNext(CampaignResponse response) {
      leading.complete(response);
    }

    @Override
    public void onError(Throwable t) {
      leading.completeExceptionally(t);
      end.complete(t instanceof StatusRuntimeException e ? e.getStatus() : Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      end.complete(Status.OK);
    }
  }
}
