package dev.redlockd.it.server;

import static dev.redlockd.it.support.LiveServer.codeOf;
import static dev.redlockd.it.support.LiveServer.fromProto;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.DescribeResponse;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Describe and ForceRelease end to end: two server processes as users run them, over the same
 * 3 redis-server processes, one with ForceRelease left off (the default) and one with it turned
 * on through its environment variable. The second one's real output is read for the audit line.
 */
class OperatorRpcsTest {
  private static final Duration TTL = Duration.ofSeconds(30);
  private static RedisCluster cluster;
  /** Without --allow-force-release. */
  private static ServerProcess locked;
  /** With REDLOCKD_ALLOW_FORCE_RELEASE=true. */
  private static ServerProcess open;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(3);
    locked = ServerProcess.start("--redis", cluster.redisFlag());
    open = ServerProcess.start(List.of(), List.of("--redis", cluster.redisFlag()),
        Map.of("REDLOCKD_ALLOW_FORCE_RELEASE", "true"));
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      locked.close();
      open.close();
    } finally {
      cluster.close();
    }
  }

  private static LockServiceGrpc.LockServiceBlockingStub stub(ServerProcess server) {
    return LockServiceGrpc.newBlockingStub(server.channel()).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static Lease acquire(String resource, String owner) {
    return stub(locked).acquire(AcquireRequest.newBuilder()
            .setResource(resource).setTtl(proto(TTL)).setOwner(owner).build())
        .getLease();
  }

  private static DescribeResponse describe(ServerProcess server, String resource) {
    return stub(server).describe(DescribeRequest.newBuilder().setResource(resource).build());
  }

  private static boolean forceRelease(ServerProcess server, String resource) {
    return stub(server).forceRelease(ForceReleaseRequest.newBuilder().setResource(resource).build()).getReleased();
  }

  private static String lockKey(String resource) {
    return "redlock:{" + resource + "}:lock";
  }

  private static List<String> nodeNames() {
    return IntStream.range(0, 3).mapToObj(i -> "127.0.0.1:" + cluster.node(i).port()).toList();
  }

  @Test
  void describeOfAHeldResourceNamesOwnerNodesFenceAndTtlButNeverTheToken() {
    Lease lease = acquire("ops-held", "billing-7f9c pid 4711");
    for (ServerProcess server : List.of(locked, open)) {
      DescribeResponse d = describe(server, "ops-held");
      assertThat(d.getHeld()).isTrue();
      assertThat(d.getOwner()).isEqualTo("billing-7f9c pid 4711");
      assertThat(d.getFencingToken()).isEqualTo(lease.getFencingToken());
      assertThat(d.getNodesList()).containsExactlyElementsOf(nodeNames());
      assertThat(fromProto(d.getRemainingTtl())).isGreaterThan(Duration.ofSeconds(25)).isLessThanOrEqualTo(TTL);
      // Anywhere in the answer, in any form: the bytes on the wire, and their text.
      String wire = new String(d.toByteArray(), StandardCharsets.ISO_8859_1);
      assertThat(wire).doesNotContain(lease.getToken());
      assertThat(d.toString()).doesNotContain(lease.getToken());
    }
    release(lease);
  }

  @Test
  void describeOfAResourceNobodyHoldsIsHeldFalseAndNothingElse() {
    DescribeResponse never = describe(locked, "ops-never-taken");
    assertThat(never).isEqualTo(DescribeResponse.getDefaultInstance());
    assertThat(never.hasRemainingTtl()).isFalse();

    Lease lease = acquire("ops-released", "x");
    release(lease);
    assertThat(describe(open, "ops-released")).isEqualTo(DescribeResponse.getDefaultInstance());
  }

  @Test
  void forceReleaseIsPermissionDeniedWithoutTheFlagAndChangesNothing() {
    Lease lease = acquire("ops-refused", "holder");
    Status status = codeOf(() -> forceRelease(locked, "ops-refused"));
    assertThat(status.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(status.getDescription()).contains("--allow-force-release");
    for (int node = 0; node < 3; node++) {
      assertThat(cluster.lockHolder(node, lockKey("ops-refused"))).as("node %d", node).isEqualTo(lease.getToken());
    }
    assertThat(describe(locked, "ops-refused").getHeld()).isTrue();
    // Refused before the request is even looked at: bad input too.
    assertThat(codeOf(() -> forceRelease(locked, "")).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(release(lease)).isTrue();
    assertThat(locked.log()).doesNotContain("ForceRelease of resource");
  }

  @Test
  void forceReleaseWithTheFlagDeletesOnEveryNodeAndTheNextFenceIsHigher() {
    Lease lease = acquire("ops-forced", "stuck-worker pid 13");

    assertThat(forceRelease(open, "ops-forced")).isTrue();

    for (int node = 0; node < 3; node++) {
      assertThat(cluster.call(node, "EXISTS", lockKey("ops-forced")))
          .as("lock key (with its owner text) on node %d", node).isEqualTo(0L);
    }
    assertThat(describe(locked, "ops-forced").getHeld()).isFalse();
    // The former holder finds out at its next renewal; its release says it no longer held it.
    Status extend = codeOf(() -> stub(locked).extend(ExtendRequest.newBuilder()
        .setResource("ops-forced").setToken(lease.getToken()).setTtl(proto(TTL)).build()));
    assertThat(extend.getCode()).isEqualTo(Status.Code.NOT_FOUND);
    Lease next = acquire("ops-forced", "next-worker");
    assertThat(next.getFencingToken()).isGreaterThan(lease.getFencingToken());
    assertThat(release(lease)).isFalse();
    assertThat(describe(open, "ops-forced").getOwner()).isEqualTo("next-worker");
    release(next);

    assertThat(forceRelease(open, "ops-forced")).as("nothing left to delete").isFalse();

    String line = await().atMost(Duration.ofSeconds(5))
        .until(() -> logLine(open, "ForceRelease of resource 'ops-forced'"), l -> l != null);
    assertThat(line).contains("WARN").contains("by /127.0.0.1:").contains("deleted its lock");
    assertThat(open.log()).doesNotContain(lease.getToken()).doesNotContain(next.getToken());
  }

  @Test
  void forceReleaseEndsTheHoldersKeepAliveStreamWithNotFound() throws Exception {
    Lease lease = acquire("ops-kept", "streaming holder");
    CompletableFuture<Status> end = new CompletableFuture<>();
    CompletableFuture<KeepAliveResponse> first = new CompletableFuture<>();
    StreamObserver<KeepAliveRequest> requests = LockServiceGrpc.newStub(locked.channel())
        .keepAlive(new StreamObserver<>() {
          @Override
          public void onNext(KeepAliveResponse response) {
            first.complete(response);
          }

          @Override
          public void onError(Throwable t) {
            end.complete(Status.fromThrowable(t));
          }

          @Override
          public void onCompleted() {
            end.complete(Status.OK);
          }
        });
    requests.onNext(KeepAliveRequest.newBuilder().setResource("ops-kept").setToken(lease.getToken())
        .setTtl(proto(Duration.ofMillis(1500))).build());
    first.get(10, TimeUnit.SECONDS);

    assertThat(forceRelease(open, "ops-kept")).isTrue();

    // Renewals come every 500 ms: the next one finds the lease gone.
    assertThat(end.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(describe(locked, "ops-kept").getHeld()).isFalse();
  }

  @Test
  void badResourcesAreInvalidArgumentAndLogNothing() {
    String tooLong = "é".repeat(256) + "x"; // 513 UTF-8 bytes
    for (String bad : new String[] {"", tooLong}) {
      assertThat(codeOf(() -> describe(locked, bad)).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(codeOf(() -> forceRelease(open, bad)).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    }
    assertThat(codeOf(() -> describe(locked, "ok")).getCode()).isEqualTo(Status.Code.OK); // a round trip after
    assertThat(open.log()).doesNotContain("ForceRelease of resource ''").doesNotContain("ééé");
  }

  @Test
  void aResourceNameCannotForgeLogLines() {
    assertThat(forceRelease(open, "evil\n12:00:00.000 INFO  [main] Forged - all is well")).isFalse();
    String line = await().atMost(Duration.ofSeconds(5))
        .until(() -> logLine(open, "ForceRelease of resource 'evil"), l -> l != null);
    assertThat(line).contains("evil\\u000a12:00:00.000 INFO");
    assertThat(open.log()).doesNotContain("\n12:00:00.000 INFO  [main] Forged");
  }

  private static boolean release(Lease lease) {
    return stub(locked).release(ReleaseRequest.newBuilder()
        .setResource(lease.getResource()).setToken(lease.getToken()).build()).getReleased();
  }

  private static String logLine(ServerProcess server, String containing) {
    return server.log().lines().filter(l -> l.contains(containing)).findFirst().orElse(null);
  }
}
