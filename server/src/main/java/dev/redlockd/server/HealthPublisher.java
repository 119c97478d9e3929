package dev.redlockd.server;

import dev.redlockd.engine.LockEngine;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;

/** Mirrors the engine's quorum onto grpc.health.v1: SERVING only while a quorum of nodes votes. */
final class HealthPublisher {
  private final HealthStatusManager health;

  HealthPublisher(HealthStatusManager health, LockEngine engine) {
    this.health = health;
    publish(engine.quorumAvailable());
    engine.onQuorumChange(this::publish);
  }

  private void publish(boolean quorum) {
    ServingStatus status = quorum ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, status);
    health.setStatus(LockServiceGrpc.SERVICE_NAME, status);
  }
}
