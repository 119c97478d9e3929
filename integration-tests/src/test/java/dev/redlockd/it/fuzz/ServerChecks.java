package dev.redlockd.it.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** What "the server stays healthy" means after abuse: health says SERVING and a normal lock cycle works. */
final class ServerChecks {
  /** Every code the contract names (lock.proto), OK included. */
  static final Set<Status.Code> CONTRACT = EnumSet.of(Status.Code.OK, Status.Code.INVALID_ARGUMENT,
      Status.Code.ABORTED, Status.Code.NOT_FOUND, Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED,
      Status.Code.RESOURCE_EXHAUSTED);

  private static final AtomicInteger names = new AtomicInteger();

  private ServerChecks() {}

  /**
   * Health says SERVING and a lock can be taken and released. Retried for up to 30 s: on a
   * loaded 2-core machine a probe can miss the node timeout and flip health for a moment; a
   * server that was really harmed does not come back.
   */
  static void assertServes(Channel channel) {
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
        .untilAsserted(() -> servesOnce(channel));
  }

  private static void servesOnce(Channel channel) {
    for (String service : new String[] {"", LockServiceGrpc.SERVICE_NAME}) {
      assertThat(HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
              .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus())
          .as("health of '%s'", service).isEqualTo(ServingStatus.SERVING);
    }
    LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channel);
    String resource = "health-after-abuse-" + names.incrementAndGet();
    Lease lease = stub.withDeadlineAfter(5, TimeUnit.SECONDS).acquire(AcquireRequest.newBuilder()
            .setResource(resource)
            .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(5))
            .build())
        .getLease();
    assertThat(lease.getFencingToken()).isPositive();
    assertThat(stub.withDeadlineAfter(5, TimeUnit.SECONDS).release(ReleaseRequest.newBuilder()
            .setResource(resource).setToken(lease.getToken()).build()).getReleased())
        .as("the lease taken after the abuse is released").isTrue();
  }

}
