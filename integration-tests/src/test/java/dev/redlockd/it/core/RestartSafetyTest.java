package dev.redlockd.it.core;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.engine.NodeState;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.Lease;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Redis nodes that restart empty must not hand out a lock that is still held. */
class RestartSafetyTest {

  private static List<NodeState> states(LiveServer h, int... nodes) {
    Map<String, NodeState> all = h.server.engine().nodeStates();
    return java.util.Arrays.stream(nodes)
        .mapToObj(i -> all.get("127.0.0.1:" + h.cluster.node(i).port()))
        .toList();
  }

  @Test
  void majorityRestartedEmptyDoesNotGrantAHeldLockAndVotesAgainAfterTheQuarantine() throws Exception {
    // The quarantine lasts --max-ttl: every lock a lost node may have held has expired by then.
    try (LiveServer h = new LiveServer(5, "--max-ttl", "3s")) {
      String r = "restart-majority";
      Lease holder = h.acquire(r, Duration.ofSeconds(3));
      long granted = System.nanoTime();
      h.cluster.restart(0, 1, 2);

      // While the holder's lease is valid, no competitor gets it: the empty nodes do not vote.
      Status competitor = codeOf(() -> h.blocking.acquire(acquireRequest(r, Duration.ofSeconds(3),
          Duration.ofMillis(500), "")));
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - granted))
          .as("the check ran while the lease was valid").isLessThan(2500);
      assertThat(competitor.getCode()).isNotEqualTo(Status.Code.OK);
      assertThat(competitor.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(competitor.getDescription()).contains("quarantined");
      await().atMost(Duration.ofSeconds(2)).until(() -> states(h, 0, 1, 2).stream()
          .allMatch(s -> s == NodeState.QUARANTINED));

      // After the quarantine they vote again, and fences keep rising.
      await().atMost(Duration.ofSeconds(10)).until(() -> states(h, 0, 1, 2).stream()
          .allMatch(s -> s == NodeState.UP));
      Lease next = h.blocking.acquire(acquireRequest(r, Duration.ofSeconds(3), Duration.ofSeconds(5), ""))
          .getLease();
      assertThat(next.getFencingToken()).isGreaterThan(holder.getFencingToken());
      assertThat(h.server.engine().quorumAvailable()).isTrue();
    }
  }

  @Test
  void singleNodeRestartedEmptyIsQuarantinedWhileTheOthersKeepGranting() throws Exception {
    try (LiveServer h = new LiveServer(5, "--max-ttl", "2s")) {
      Lease before = h.acquire("restart-one-a", Duration.ofSeconds(2));
      h.cluster.restart(4);
      Lease during = h.acquire("restart-one-b", Duration.ofSeconds(2));
      assertThat(during.getFencingToken()).isPositive();
      await().atMost(Duration.ofSeconds(2)).until(() -> states(h, 4).get(0) == NodeState.QUARANTINED);
      // The lock taken before the restart still holds: 4 voters, 4 refuse.
      assertThat(codeOf(() -> h.acquire("restart-one-a", Duration.ofSeconds(2))).getCode())
          .isEqualTo(Status.Code.ABORTED);
      await().atMost(Duration.ofSeconds(10)).until(() -> states(h, 4).get(0) == NodeState.UP);
      // Rejoined with its fencing floor raised: a grant on it alone with two others still rises.
      h.cluster.pause(0, 1);
      try {
        Lease after = h.blocking.acquire(acquireRequest("restart-one-a", Duration.ofSeconds(2),
            Duration.ofSeconds(3), "")).getLease();
        assertThat(after.getFencingToken()).isGreaterThan(before.getFencingToken());
      } finally {
        h.cluster.resume(0, 1);
      }
    }
  }
}
