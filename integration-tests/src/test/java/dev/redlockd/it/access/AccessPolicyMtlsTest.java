package dev.redlockd.it.access;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import dev.redlockd.testing.TestCertificates;
import dev.redlockd.testing.TestCertificates.Authority;
import dev.redlockd.testing.TestCertificates.Issued;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Identities from client certificates (URI SAN, else CN) under mutual TLS, with certificates made here. */
class AccessPolicyMtlsTest {
  private static final String POLICY = """
      {
        "version": 1,
        "identities": [
          {"identity": "spiffe://corp/team-a/*", "lock": ["a/"], "describe": ["a/"]},
          {"identity": "ops-console", "describe": [""]}
        ]
      }
      """;

  @TempDir
  Path dir;

  private static ChannelCredentials as(Authority ca, Issued client) throws Exception {
    return TlsChannelCredentials.newBuilder().trustManager(ca.cert().toFile())
        .keyManager(client.cert().toFile(), client.key().toFile()).build();
  }

  @Test
  void theCertificatesUriSanElseItsCommonNameIsTheIdentity() throws Exception {
    Authority ca = TestCertificates.authority(dir, "access test CA");
    Issued server = ca.issue("localhost", "127.0.0.1", "localhost");
    // The CN says ops-console, but the URI SAN wins: this is team-a's api.
    Issued teamA = ca.issue("ops-console", "spiffe://corp/team-a/api");
    Issued ops = ca.issue("ops-console");
    Tenant opsToken = Tenant.named("spiffe://corp/team-a/api");
    Path policy = Files.writeString(dir.resolve("policy.json"), POLICY);
    Path tokens = Files.writeString(dir.resolve("tokens"), opsToken.tokenLine() + "\n");
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess process = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", "250ms",
            "--tls-cert", server.cert().toString(), "--tls-key", server.key().toString(),
            "--tls-client-ca", ca.cert().toString(), "--policy", policy.toString(), "--tokens", tokens.toString())) {
      ManagedChannel a = process.newChannel(as(ca, teamA));
      ManagedChannel o = process.newChannel(as(ca, ops));
      try {
        LockServiceGrpc.LockServiceBlockingStub asA = LockServiceGrpc.newBlockingStub(a)
            .withDeadlineAfter(10, TimeUnit.SECONDS);
        var lease = asA.acquire(acquireRequest("a/mtls", Duration.ofSeconds(10), Duration.ZERO, "")).getLease();
        Status denied = codeOf(() -> asA.acquire(acquireRequest("b/mtls", Duration.ofSeconds(10), Duration.ZERO, "")));
        assertThat(denied.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(denied.getDescription()).contains("'spiffe://corp/team-a/api'", "Acquire", "'b/mtls'");

        LockServiceGrpc.LockServiceBlockingStub asOps = LockServiceGrpc.newBlockingStub(o)
            .withDeadlineAfter(10, TimeUnit.SECONDS);
        assertThat(asOps.describe(DescribeRequest.newBuilder().setResource("a/mtls").build()).getHeld()).isTrue();
        Status opsLock = codeOf(() -> asOps.acquire(acquireRequest("a/ops", Duration.ofSeconds(10), Duration.ZERO,
            "")));
        assertThat(opsLock.getDescription()).contains("'ops-console'", "Acquire");
        // A certificate was proved in the handshake; a bearer token beside it is only presented, and loses.
        Status withToken = codeOf(() -> opsToken.locks(o).acquire(acquireRequest("a/ops", Duration.ofSeconds(10),
            Duration.ZERO, "")));
        assertThat(withToken.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(withToken.getDescription()).contains("'ops-console'");

        assertThat(asA.release(ReleaseRequest.newBuilder().setResource("a/mtls").setToken(lease.getToken()).build())
            .getReleased()).isTrue();
      } finally {
        a.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        o.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
      assertThat(process.log()).contains("denied Acquire of resource 'b/mtls' to identity 'spiffe://corp/team-a/api'");
    }
  }

  /**
   * A certificate's identity whose grant a policy reload takes away: its open KeepAlive and
   * Campaign streams end PERMISSION_DENIED at their next renewal, and their lease and leadership
   * stay on the nodes until their ttl runs out.
   */
  @Test
  void aCertificatesRevokedGrantEndsItsStreamsAndReleasesNothing() throws Exception {
    Authority ca = TestCertificates.authority(dir, "access test CA");
    Issued server = ca.issue("localhost", "127.0.0.1", "localhost");
    Issued teamA = ca.issue("team-a", "spiffe://corp/team-a/api");
    Path policy = Files.writeString(dir.resolve("policy.json"), POLICY);
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess process = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", "250ms",
            "--tls-cert", server.cert().toString(), "--tls-key", server.key().toString(),
            "--tls-client-ca", ca.cert().toString(), "--policy", policy.toString())) {
      ManagedChannel a = process.newChannel(as(ca, teamA));
      try {
        var lease = LockServiceGrpc.newBlockingStub(a).withDeadlineAfter(10, TimeUnit.SECONDS)
            .acquire(acquireRequest("a/kept", Duration.ofSeconds(30), Duration.ZERO, "")).getLease();
        StreamEnd<KeepAliveResponse> keepAlive = new StreamEnd<>();
        LockServiceGrpc.newStub(a).keepAlive(keepAlive).onNext(KeepAliveRequest.newBuilder().setResource("a/kept")
            .setToken(lease.getToken()).setTtl(proto(Duration.ofSeconds(6))).build());
        assertThat(keepAlive.next(10)).isNotNull();
        StreamEnd<CampaignResponse> campaign = new StreamEnd<>();
        ElectionServiceGrpc.newStub(a).campaign(campaign).onNext(CampaignRequest.newBuilder().setElection("a/led")
            .setValue("a-1").setTtl(proto(Duration.ofSeconds(6))).build());
        assertThat(campaign.next(10)).isNotNull();

        Path next = Files.writeString(dir.resolve("policy.json.next"),
            POLICY.replace("\"lock\": [\"a/\"], ", ""));
        Files.move(next, policy, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        for (StreamEnd<?> stream : java.util.List.of(keepAlive, campaign)) {
          Status end = stream.status(10);
          assertThat(end.getCode()).as(end.toString()).isEqualTo(Status.Code.PERMISSION_DENIED);
          assertThat(end.getDescription()).contains("'spiffe://corp/team-a/api'");
        }
        String lockKey = "redlock:{a/kept}:lock";
        String leaderKey = "redlock:election:{a/led}:lock";
        for (int node = 0; node < cluster.size(); node++) {
          assertThat(cluster.lockHolder(node, lockKey)).as("lease on node " + node).isEqualTo(lease.getToken());
          assertThat(cluster.get(node, leaderKey)).as("leadership on node " + node).isNotNull();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (cluster.get(0, lockKey) != null || cluster.get(0, leaderKey) != null) {
          assertThat(System.nanoTime()).as("both run out at their ttl").isLessThan(deadline);
          Thread.sleep(50);
        }
      } finally {
        a.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }
}
