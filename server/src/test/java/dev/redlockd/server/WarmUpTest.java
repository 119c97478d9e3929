package dev.redlockd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Duration;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Scrape;
import dev.redlockd.testing.UntilAvailable;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A start runs its warm-up before the port opens, through its own lock service over real
 * sockets to 3 real Redis nodes: every scratch lease taken, half of them kept on a stream and
 * renewed, all released; nothing left held on any node, nothing counted as a call, a stream or
 * a renewal in the replica's metrics, and the replica serves as usual afterwards. Its loopback
 * port, which has no access check, serves only calls that carry the start's secret.
 */
class WarmUpTest {
  private static final int LEASES = 40;

  @Test
  void scratchLeasesRunBeforeThePortOpensAndLeaveNothingHeld() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      int metricsPort = freePort();
      RedlockdServer server = RedlockdServer.start(ServerConfig.parse("--port", "0", "--redis", cluster.redisFlag(),
          "--warm-up", Integer.toString(LEASES), "--metrics-port", Integer.toString(metricsPort)));
      try {
        WarmUp.Outcome done = server.warmedUp();
        assertThat(done.leases()).isEqualTo(LEASES);
        assertThat(done.renewals()).as("every kept scratch lease renewed on its stream")
            .isEqualTo(LEASES / 2 * WarmUp.RENEWALS);
        assertThat(done.failed()).isZero();
        for (int node = 0; node < cluster.size(); node++) {
          assertThat((List<?>) cluster.call(node, "KEYS", "*redlockd-warm-up*:lock"))
              .as("scratch locks still held on node %d", node).isEmpty();
        }
        Scrape metrics = Scrape.of(metricsPort);
        assertThat(metrics.value("redlockd_rpc_calls_total")).isZero();
        assertThat(metrics.value("redlockd_kept_lease_renewals_total")).isZero();
        assertThat(metrics.value("redlockd_streams_open")).isZero();

        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        try {
          LockServiceGrpc.LockServiceBlockingStub locks = LockServiceGrpc.newBlockingStub(channel);
          Lease lease = UntilAvailable.call(() -> locks.withDeadlineAfter(5, TimeUnit.SECONDS)
              .acquire(AcquireRequest.newBuilder().setResource("after-warm-up")
                  .setTtl(Duration.newBuilder().setSeconds(10)).build())
              .getLease());
          assertThat(locks.release(ReleaseRequest.newBuilder().setResource("after-warm-up")
              .setToken(lease.getToken()).build()).getReleased()).isTrue();
        } finally {
          channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
      } finally {
        server.close();
      }
    }
  }

  @Test
  void noneWhenTurnedOff() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      RedlockdServer server = RedlockdServer.start(ServerConfig.parse("--port", "0", "--redis", cluster.redisFlag(),
          "--warm-up", "0"));
      try {
        assertThat(server.warmedUp()).isEqualTo(WarmUp.Outcome.NONE);
        for (int node = 0; node < cluster.size(); node++) {
          assertThat((List<?>) cluster.call(node, "KEYS", "*redlockd-warm-up*")).isEmpty();
        }
      } finally {
        server.close();
      }
    }
  }

  @Test
  void itsPortServesOnlyCallsWithTheStartsSecret() throws Exception {
    String name = "warm-up-secret";
    HealthStatusManager health = new HealthStatusManager();
    Server server = InProcessServerBuilder.forName(name).directExecutor()
        .addService(ServerInterceptors.intercept(health.getHealthService(), new WarmUp.SecretCheck("s3cret")))
        .build().start();
    ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    try {
      for (String given : new String[] {null, "wrong", "s3cre"}) {
        Metadata headers = new Metadata();
        if (given != null) {
          headers.put(WarmUp.SECRET, given);
        }
        assertThatThrownBy(() -> HealthGrpc.newBlockingStub(channel)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
            .check(HealthCheckRequest.getDefaultInstance()))
            .isInstanceOfSatisfying(StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
      }
      Metadata headers = new Metadata();
      headers.put(WarmUp.SECRET, "s3cret");
      assertThat(HealthGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
          .check(HealthCheckRequest.getDefaultInstance()).getStatus())
          .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    } finally {
      channel.shutdownNow();
      server.shutdownNow();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
