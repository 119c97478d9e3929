package dev.redlockd.it.core;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** N=5: for every subset of frozen nodes, a grant happens exactly when a quorum is up. */
class QuorumSubsetsTest {
  private static final Duration TTL = Duration.ofSeconds(1);
  private static LiveServer h;

  @BeforeAll
  static void start() throws Exception {
    h = new LiveServer(5);
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @Test
  void everySubsetOfFrozenNodesGrantsExactlyWhenAQuorumAnswers() {
    List<String> outcomes = new ArrayList<>();
    for (int mask = 0; mask < 32; mask++) {
      int[] frozen = nodesIn(mask);
      String r = "subset-" + mask;
      h.cluster.pause(frozen);
      Status status;
      try {
        status = codeOf(() -> h.blocking.acquire(acquireRequest(r, TTL, Duration.ZERO, "")));
      } finally {
        h.cluster.resume(frozen);
      }
      int up = 5 - frozen.length;
      outcomes.add(mask + ":" + status.getCode());
      if (up >= 3) {
        assertThat(status.getCode()).as("%d nodes up (mask %s)", up, Integer.toBinaryString(mask))
            .isEqualTo(Status.Code.OK);
      } else {
        assertThat(status.getCode()).as("%d nodes up (mask %s)", up, Integer.toBinaryString(mask))
            .isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(status.getDescription()).contains(up + " of 5");
        // Nothing leaks: a frozen node runs the queued write of the failed round when it wakes
        // up, after the clean-up, so that key lives out its ttl; then another client gets it.
        Lease other = h.blocking.acquire(acquireRequest(r, TTL, Duration.ofSeconds(3), "")).getLease();
        h.blocking.release(ReleaseRequest.newBuilder().setResource(r).setToken(other.getToken()).build());
      }
    }
    assertThat(outcomes).hasSize(32);
  }

  @Test
  void aKilledMinorityIsSurvived() {
    try (LiveServer own = new LiveServer(5)) {
      own.cluster.kill(3, 4);
      Lease lease = own.acquire("killed-minority", TTL);
      assertThat(lease.getFencingToken()).isPositive();
      assertThat(own.blocking.release(ReleaseRequest.newBuilder()
          .setResource("killed-minority").setToken(lease.getToken()).build()).getReleased()).isTrue();
      own.cluster.kill(2);
      Status status = codeOf(() -> own.acquire("killed-majority", TTL));
      assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(status.getDescription()).contains("2 of 5");
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static int[] nodesIn(int mask) {
    return java.util.stream.IntStream.range(0, 5).filter(i -> (mask & (1 << i)) != 0).toArray();
  }
}
