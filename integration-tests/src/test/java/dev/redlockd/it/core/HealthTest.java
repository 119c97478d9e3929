package dev.redlockd.it.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.it.support.LiveServer;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** grpc.health.v1 follows the quorum. */
class HealthTest {

  private static ServingStatus status(LiveServer h, String service) {
    return HealthGrpc.newBlockingStub(h.channel)
        .check(HealthCheckRequest.newBuilder().setService(service).build())
        .getStatus();
  }

  @Test
  void healthIsNotServingWithoutAQuorumAndServingAgainWhenItReturns() throws Exception {
    try (LiveServer h = new LiveServer(3)) {
      assertThat(status(h, "")).isEqualTo(ServingStatus.SERVING);
      assertThat(status(h, "redlock.v1.LockService")).isEqualTo(ServingStatus.SERVING);
      h.cluster.pause(0, 1);
      try {
        await().atMost(Duration.ofSeconds(3)).until(() -> status(h, "") == ServingStatus.NOT_SERVING);
        assertThat(status(h, "redlock.v1.LockService")).isEqualTo(ServingStatus.NOT_SERVING);
      } finally {
        h.cluster.resume(0, 1);
      }
      await().atMost(Duration.ofSeconds(3)).until(() -> status(h, "") == ServingStatus.SERVING);
      // One node down is not a lost quorum.
      h.cluster.kill(2);
      Thread.sleep(1500);
      assertThat(status(h, "")).isEqualTo(ServingStatus.SERVING);
    }
  }
}
