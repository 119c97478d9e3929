package dev.redlockd.spring;

import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * UP while the server answers the gRPC health check of its lock service with SERVING, which it
 * does while a quorum of its Redis nodes answers; DOWN with the server's answer (NOT_SERVING,
 * or the call's status: UNAVAILABLE when no replica is reachable) otherwise. With several
 * replicas behind the channel, one of them answers each check.
 */
public final class RedlockdHealthIndicator extends AbstractHealthIndicator {
  private final HealthGrpc.HealthBlockingStub health;
  private final Duration timeout;

  public RedlockdHealthIndicator(Channel channel, Duration timeout) {
    super("redlockd health check failed");
    this.health = HealthGrpc.newBlockingStub(channel);
    this.timeout = timeout;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    try {
      HealthCheckResponse.ServingStatus status = health.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
          .check(HealthCheckRequest.newBuilder().setService(LockServiceGrpc.SERVICE_NAME).build())
          .getStatus();
      (status == HealthCheckResponse.ServingStatus.SERVING ? builder.up() : builder.down())
          .withDetail("status", status.name());
    } catch (StatusRuntimeException e) {
      builder.down().withDetail("status", e.getStatus().getCode().name())
          .withDetail("error", String.valueOf(e.getStatus().getDescription()));
    }
  }
}
