package dev.redlockd.it.keepalive;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.FreePort;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.testing.Scrape;
import io.grpc.Status;
import java.time.Duration;
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
    metricsPort = FreePort.pick();
    h = new LiveServer(3, "--metrics-port", Integer.toString(metricsPort), "--node-timeout", "250ms");
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
    CampaignProbe leader = CampaignProbe.open(elections);
    long lastSent = 0;
    for (int sequence = 1; sequence <= 6; sequence++) {
      leader.send(election, "a", TTL, "", false, sequence);
      lastSent = System.nanoTime();
      Thread.sleep(PERIOD.toMillis());
    }
    long term = leader.next(Duration.ofSeconds(5)).getTerm();
    assertThat(leader.end).isNotDone();
    String token = leaderToken(key);

    Status end = leader.end.get(5, TimeUnit.SECONDS);
    long endedAt = System.nanoTime();
    assertThat(end.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(endedAt - lastSent).isGreaterThan(TTL.toNanos());

    assertRunsOutWithoutBeingReleased(key, token);
    CampaignProbe next = CampaignProbe.open(elections);
    next.send(election, "b", TTL, "", false, 1);
    assertThat(next.next(Duration.ofSeconds(5)).getTerm()).isGreaterThan(term);
    next.halfClose();
    assertThat(stopped("Campaign")).isEqualTo(1);
  }

  /**
   * A candidate still in line has nothing renewed whose reports could notice that its client is
   * gone, but its client sends a request every ttl/4 while it waits. One silent for longer than
   * the ttl is withdrawn (its stream ends DEADLINE_EXCEEDED), and is not elected for nobody when
   * the leader resigns; one that keeps talking waits on, and is the one elected.
   */
  @Test
  void aWaitingCandidateSilentForLongerThanTheTtlIsWithdrawnAndOneThatTalksWaitsOn() throws Exception {
    String election = "silent-reader-waiting";
    ElectionServiceGrpc.ElectionServiceStub elections = ElectionServiceGrpc.newStub(h.channel);
    double stoppedBefore = stopped("Campaign");
    CampaignProbe leader = CampaignProbe.open(elections);
    leader.send(election, "a", TTL, "", false, 1);
    assertThat(leader.next(Duration.ofSeconds(5)).getValue()).isEqualTo("a");
    CampaignProbe silent = CampaignProbe.open(elections);
    silent.send(election, "b", TTL, "", false, 1);
    long silentSince = System.nanoTime();
    CampaignProbe talking = CampaignProbe.open(elections);

    // Three ttls in which the leader and the talking candidate send on the clients' period.
    for (int sequence = 1; sequence <= 12; sequence++) {
      if (sequence > 1) {
        leader.send(election, "a", TTL, "", false, sequence);
      }
      talking.send(election, "d", TTL, "", false, sequence);
      Thread.sleep(PERIOD.toMillis());
    }
    Status end = silent.end.get(5, TimeUnit.SECONDS);
    assertThat(end.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(end.getDescription()).contains("withdrawn");
    assertThat(silent.answers).as("the silent candidate never led").isEmpty();
    assertThat(talking.end).as("the talking candidate still waits").isNotDone();
    assertThat(talking.answers).isEmpty();
    assertThat(leader.end).isNotDone();
    assertThat(stopped("Campaign") - stoppedBefore).isEqualTo(1);

    leader.halfClose();
    assertThat(leader.end.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
    assertThat(talking.next(Duration.ofSeconds(5)).getValue()).as("the next leader").isEqualTo("d");
    assertThat(System.nanoTime() - silentSince).isGreaterThan(TTL.toNanos());
    talking.halfClose();
    assertThat(talking.end.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
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
}
