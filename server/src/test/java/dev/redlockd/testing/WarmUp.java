package dev.redlockd.testing;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One Acquire and Release of a resource no test uses, through a server process just started,
 * before the test gets it: a cold server answers its first Acquire from cold code (about 110 ms on
 * a quiet machine of the CI kind, of which the nodes get the 50 ms default node timeout), and
 * beside another test class its first round missed the node timeout on every node, failing a
 * test whose claim was something else. Done only where it changes nothing a test looks at: a
 * server that serves, over plaintext, with no access policy and the default node timeout (tests
 * that count calls, denials or log lines set one of those). Its outcome is not a test's claim:
 * any failure is ignored.
 */
final class WarmUp {
  static final String RESOURCE = "test-support/warm-up";
  private static final List<String> SKIP_WITH = List.of("--tls-cert", "--policy", "--tokens", "--node-timeout",
      "healthcheck");
  private static final Duration WITHIN = Duration.ofSeconds(10);

  private WarmUp() {}

  static boolean wanted(List<String> flags) {
    return flags.stream().noneMatch(f -> SKIP_WITH.stream().anyMatch(s -> f.equals(s) || f.startsWith(s + "=")));
  }

  static void run(ManagedChannel channel) {
    try {
      if (HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus() != ServingStatus.SERVING) {
        return;
      }
      UntilAvailable.call(WITHIN, () -> {
        LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channel)
            .withDeadlineAfter(5, TimeUnit.SECONDS);
        String token = stub.acquire(AcquireRequest.newBuilder().setResource(RESOURCE)
            .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(5)).build()).getLease().getToken();
        return stub.release(ReleaseRequest.newBuilder().setResource(RESOURCE).setToken(token).build());
      });
    } catch (StatusRuntimeException e) {
      // not serving yet, not over plaintext, or still failing: nothing to warm
    } catch (IllegalStateException interrupted) {
      // UntilAvailable keeps the thread's interrupt status for the caller
    }
  }
}
