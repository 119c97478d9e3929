package dev.redlockd.it.keepalive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.FreePort;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.testing.Scrape;
import io.grpc.Status;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A client opens a second KeepAlive stream for a lease only when it took the first for silent
 * (rule 19 of clients/conformance/README.md); when both reach the same replica, that replica
 * renews the lease for the newer one alone once the newer one's first renewal held: the older
 * ends UNAVAILABLE, releasing nothing, instead of being renewed until its reader is seen gone a
 * ttl later. Real server, real sockets, real Redis: the nodes show the lease held and renewed
 * through the newer stream.
 */
class SupersededStreamTest {
  private static final Duration TTL = Duration.ofSeconds(2);
  private static LiveServer h;
  private static int metricsPort;

  @BeforeAll
  static void start() throws Exception {
    metricsPort = FreePort.pick();
    h = new LiveServer(3, "--metrics-port", Integer.toString(metricsPort));
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @Test
  void aNewerStreamOfTheSameLeaseEndsTheOlderOneWithoutReleasingAnything() throws Exception {
    String r = "superseded-stream";
    String key = "redlock:{" + r + "}:lock";
    Lease lease = h.acquire(r, TTL);
    StreamProbe older = StreamProbe.open(h.async);
    older.send(r, lease.getToken(), TTL, 1);
    assertThat(older.next(Duration.ofSeconds(5)).getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);

    StreamProbe newer = StreamProbe.open(h.async);
    newer.send(r, lease.getToken(), TTL, 2);
    Status end = older.awaitEnd(Duration.ofSeconds(5));
    assertThat(end.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(end.getDescription()).contains("newer KeepAlive stream").contains("nothing was released");
    KeepAliveResponse first = newer.next(Duration.ofSeconds(5));
    assertThat(first.getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    assertThat(first.getLease().getFencingToken()).isEqualTo(lease.getFencingToken());
    assertThat(holders(key, lease.getToken())).as("nodes holding the lease after the older stream ended").isEqualTo(3);

    // Past the ttl, held through the newer stream alone (the older one asks nothing any more).
    long until = System.nanoTime() + TTL.toNanos() + TTL.toNanos() / 2;
    long sequence = 3;
    while (System.nanoTime() < until) {
      newer.send(r, lease.getToken(), TTL, sequence++);
      assertThat(newer.next(Duration.ofSeconds(5)).getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
      Thread.sleep(TTL.dividedBy(4).toMillis());
    }
    assertThat(holders(key, lease.getToken())).isEqualTo(3);
    assertThat(newer.end).isNotDone();
    assertThat(Scrape.of(metricsPort).value("redlockd_kept_streams_stopped_total", "stream", "KeepAlive", "reason",
        "superseded")).isEqualTo(1);

    newer.halfClose();
    assertThat(newer.awaitEnd(Duration.ofSeconds(5)).getCode()).isEqualTo(Status.Code.OK);
    assertThat(holders(key, lease.getToken())).as("released by the newer stream's half-close").isZero();
  }

  @Test
  void streamsOfDifferentLeasesLeaveEachOtherAlone() throws Exception {
    Lease a = h.acquire("superseded-a", TTL);
    Lease b = h.acquire("superseded-b", TTL);
    StreamProbe first = StreamProbe.open(h.async);
    first.send("superseded-a", a.getToken(), TTL, 1);
    assertThat(first.next(Duration.ofSeconds(5)).getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    StreamProbe second = StreamProbe.open(h.async);
    second.send("superseded-b", b.getToken(), TTL, 1);
    assertThat(second.next(Duration.ofSeconds(5)).getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    first.send("superseded-a", a.getToken(), TTL, 2);
    assertThat(first.next(Duration.ofSeconds(5)).getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    assertThat(first.end).isNotDone();
    first.halfClose();
    second.halfClose();
    assertThat(first.awaitEnd(Duration.ofSeconds(5)).getCode()).isEqualTo(Status.Code.OK);
    assertThat(second.awaitEnd(Duration.ofSeconds(5)).getCode()).isEqualTo(Status.Code.OK);
  }

  private static int holders(String key, String token) {
    int n = 0;
    for (int node = 0; node < h.cluster.size(); node++) {
      n += token.equals(h.cluster.lockHolder(node, key)) ? 1 : 0;
    }
    return n;
  }
}
