package dev.redlockd.it.keepalive;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.it.support.BlackholeProxy;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A holder that vanishes without a word (power cut, partition: no FIN, no RST) is noticed by
 * the server's HTTP/2 pings, and its lease then runs out instead of being renewed for as long
 * as TCP takes to give up.
 */
class SilentClientTest {

  @Test
  void aClientGoneSilentIsNoticedByPingsAndItsLeaseRunsOut() throws Exception {
    try (LiveServer h = new LiveServer(3, "--keepalive-time", "10s", "--keepalive-timeout", "1s");
        BlackholeProxy proxy = new BlackholeProxy(h.server.port())) {
      String r = "silent-client";
      Duration ttl = Duration.ofSeconds(1);
      Lease lease = h.acquire(r, ttl);
      ManagedChannel viaProxy = Grpc.newChannelBuilder("127.0.0.1:" + proxy.port(),
          InsecureChannelCredentials.create()).build();
      try {
        StreamProbe probe = StreamProbe.open(LockServiceGrpc.newStub(viaProxy));
        probe.send(r, lease.getToken(), ttl);
        probe.next(Duration.ofMillis(300));

        proxy.blackhole();
        long cut = System.nanoTime();

        await().atMost(Duration.ofSeconds(30)).until(() -> h.server.openStreams() == 0);
        long noticedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
        System.out.println("a silent client was noticed after " + noticedMs + " ms");
        // keepalive-time + keepalive-timeout (grpc-java pings no more often than every 10 s).
        assertThat(noticedMs).isLessThan(14_000);
        // Renewals stopped: the lease runs out and a competitor gets it.
        Lease next = h.blocking.acquire(acquireRequest(r, ttl, Duration.ofSeconds(3), "")).getLease();
        assertThat(next.getFencingToken()).isGreaterThan(lease.getFencingToken());
      } finally {
        viaProxy.shutdownNow();
      }
    }
  }
}
