package dev.redlockd.it.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockOptions;
import dev.redlockd.it.support.LiveServer;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Regression, found while writing the checker's deadline rule: the Java client's KeepAlive
 * deadline was "arrival of the renewal's answer, less the round trip of the first exchange,
 * plus the validity". The server counts that validity from when its renewal finished, so an
 * answer that spent longer on its way than the first one moved the client's deadline past the
 * server's, by the difference, and a holder that trusted {@code isValid()} relied on a lock
 * another client had been granted. The client now counts from the send time of the request
 * whose sequence the answer echoes (LeaseKeeper). Here the answers from the server are held
 * back more and more (as on a congested link), a majority of nodes is frozen so that renewals
 * stop, and a second client takes the lock once it has run out on every node.
 */
class DelayedRenewalTest {
  private static final Duration TTL = Duration.ofSeconds(3);

  @Test
  void aRenewalAnswerDelayedOnItsWayDoesNotKeepALeaseValidPastTheServersValidity() throws Exception {
    try (LiveServer h = new LiveServer(3); DelayProxy proxy = new DelayProxy(h.server.port())) {
      ManagedChannel slowLink = Grpc.newChannelBuilder("127.0.0.1:" + proxy.port(),
          InsecureChannelCredentials.create()).build();
      try {
        Lease first = LockClient.create(slowLink).acquire("delayed-renewals", LockOptions.ttl(TTL)).keepAlive();
        Thread.sleep(500); // the first exchange is over: its round trip is a loopback one
        // The client asks for a renewal every ttl/4 (750 ms). Each step adds 100 ms to the
        // answers' way, up to 600 ms: each still arrives within a quarter of the ttl of its
        // request (later, the stream would count as silent and be reopened, rule 19), with 2.3 s
        // of its validity left, so the lease is never lost here.
        for (int step = 1; step <= 6; step++) {
          proxy.delayAnswers(Duration.ofMillis(100L * step));
          Thread.sleep(1200);
          assertThat(first.isValid()).as("kept alive while its answers come %d ms late", 100 * step).isTrue();
        }

        h.cluster.pause(0, 1); // no renewal reaches a quorum from here on
        long frozen = System.nanoTime();
        // The last renewal finished before the freeze, so the server's validity and the keys on
        // every node (frozen ones included: expiry follows the wall clock) end within one ttl.
        Thread.sleep(TTL.toMillis() + 100);
        h.cluster.resume(0, 1);

        Lease second = LockClient.create(h.channel).acquire("delayed-renewals",
            LockOptions.ttl(TTL).waitUpTo(Duration.ofSeconds(3)));
        long granted = System.nanoTime();
        boolean firstStillValid = first.isValid();
        long firstRemainingMs = first.remaining().toMillis();
        second.close();
        assertThat(firstStillValid)
            .as("the first holder's lease when a second holder was granted the lock %d ms after the freeze"
                + " (the first believed it had %d ms left)", TimeUnit.NANOSECONDS.toMillis(granted - frozen),
                firstRemainingMs)
            .isFalse();
      } finally {
        h.cluster.resumeAll();
        slowLink.shutdownNow();
      }
    }
  }
}
