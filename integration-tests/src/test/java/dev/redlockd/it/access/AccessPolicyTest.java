package dev.redlockd.it.access;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.DescribeResponse;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each governed RPC allowed on its caller's prefixes and refused elsewhere, against the real server
 * process with a policy and bearer tokens made here.
 */
class AccessPolicyTest {
  static final String POLICY = """
      {
        "version": 1,
        "identities": [
          {"identity": "team-a", "lock": ["a/"], "describe": ["a/"], "force_release": ["a/"]},
          {"identity": "svc/*", "lock": ["b/"], "describe": ["b/"]},
          {"identity": "svc/b-reader", "describe": ["b/"]}
        ]
      }
      """;

  @TempDir
  static Path dir;
  private static RedisCluster cluster;
  private static ServerProcess server;
  private static final Tenant teamA = Tenant.named("team-a");
  private static final Tenant teamB = Tenant.named("svc/b-api"); // through the svc/* wildcard
  private static final Tenant reader = Tenant.named("svc/b-reader");
  private static final Tenant stranger = Tenant.named("nobody"); // a known token, no policy entry

  @BeforeAll
  static void start() throws Exception {
    cluster = RedisCluster.start(3);
    Path policy = Files.writeString(dir.resolve("policy.json"), POLICY);
    Path tokens = Files.writeString(dir.resolve("tokens"), String.join("\n", "# made by AccessPolicyTest",
        teamA.tokenLine(), teamB.tokenLine(), reader.tokenLine(), stranger.tokenLine()) + "\n");
    server = ServerProcess.start("--redis", cluster.redisFlag(), "--bind", "127.0.0.1", "--policy", policy.toString(),
        "--tokens", tokens.toString(), "--allow-force-release", "--node-timeout", "250ms");
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
      assertThat(server.log()).as("no token in the log")
          .doesNotContain(teamA.token()).doesNotContain(teamB.token()).doesNotContain(stranger.token());
    }
    cluster.close();
  }

  private static Channel channel() {
    return server.channel();
  }

  /** A refusal that names the identity, the RPC and the resource, and never a token. */
  private static void assertDenied(Status status, Tenant who, String rpc, String resource) {
    assertThat(status.getCode()).as(status.toString()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(status.getDescription()).contains("'" + who.identity() + "'", rpc, "'" + resource + "'")
        .doesNotContain(who.token());
  }

  private static Lease acquire(Tenant who, String resource) {
    return who.locks(channel()).acquire(acquireRequest(resource, Duration.ofSeconds(20), Duration.ZERO, ""))
        .getLease();
  }

  @Test
  void acquireExtendAndReleaseAreAllowedOnOwnPrefixAndRefusedOnAnother() {
    LockServiceGrpc.LockServiceBlockingStub a = teamA.locks(channel());
    Lease own = acquire(teamA, "a/unary");
    assertThat(a.extend(ExtendRequest.newBuilder().setResource("a/unary").setToken(own.getToken())
        .setTtl(proto(Duration.ofSeconds(20))).build()).getLease().getFencingToken())
        .isEqualTo(own.getFencingToken());
    assertThat(a.release(ReleaseRequest.newBuilder().setResource("a/unary").setToken(own.getToken()).build())
        .getReleased()).isTrue();

    Lease theirs = acquire(teamB, "b/unary");
    assertDenied(codeOf(() -> a.acquire(acquireRequest("b/other", Duration.ofSeconds(5), Duration.ZERO, ""))),
        teamA, "Acquire", "b/other");
    // Even with the holder's token in hand, another tenant cannot touch the lease.
    assertDenied(codeOf(() -> a.extend(ExtendRequest.newBuilder().setResource("b/unary").setToken(theirs.getToken())
        .setTtl(proto(Duration.ofSeconds(5))).build())), teamA, "Extend", "b/unary");
    assertDenied(codeOf(() -> a.release(ReleaseRequest.newBuilder().setResource("b/unary")
        .setToken(theirs.getToken()).build())), teamA, "Release", "b/unary");
    assertThat(teamB.locks(channel()).describe(DescribeRequest.newBuilder().setResource("b/unary").build())
        .getHeld()).as("the refused Release changed nothing").isTrue();
    assertThat(teamB.locks(channel()).release(ReleaseRequest.newBuilder().setResource("b/unary")
        .setToken(theirs.getToken()).build()).getReleased()).isTrue();
  }

  @Test
  void keepAliveIsCheckedOnItsFirstRequestAndEveryLaterOne() throws Exception {
    Lease own = acquire(teamA, "a/kept");
    StreamEnd<KeepAliveResponse> kept = new StreamEnd<>();
    StreamObserver<KeepAliveRequest> requests = teamA.asyncLocks(channel()).keepAlive(kept);
    requests.onNext(KeepAliveRequest.newBuilder().setResource("a/kept").setToken(own.getToken())
        .setTtl(proto(Duration.ofSeconds(3))).setSequence(1).build());
    KeepAliveResponse first = kept.next(10);
    assertThat(first).isNotNull();
    assertThat(first.getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    // A later request naming a resource outside the grant ends the stream.
    requests.onNext(KeepAliveRequest.newBuilder().setResource("b/kept").setToken(own.getToken()).setSequence(2)
        .build());
    assertDenied(kept.status(10), teamA, "KeepAlive", "b/kept");

    Lease theirs = acquire(teamB, "b/kept");
    StreamEnd<KeepAliveResponse> refused = new StreamEnd<>();
    teamA.asyncLocks(channel()).keepAlive(refused).onNext(KeepAliveRequest.newBuilder().setResource("b/kept")
        .setToken(theirs.getToken()).setTtl(proto(Duration.ofSeconds(3))).build());
    assertDenied(refused.status(10), teamA, "KeepAlive", "b/kept");
    assertThat(refused.responses).isEmpty();
    assertThat(teamB.locks(channel()).release(ReleaseRequest.newBuilder().setResource("b/kept")
        .setToken(theirs.getToken()).build()).getReleased()).isTrue();
  }

  @Test
  void describeAndForceReleaseNeedTheirOwnGrants() {
    LockServiceGrpc.LockServiceBlockingStub a = teamA.locks(channel());
    acquire(teamA, "a/forced");
    assertThat(a.describe(DescribeRequest.newBuilder().setResource("a/forced").build()).getHeld()).isTrue();
    assertThat(a.forceRelease(ForceReleaseRequest.newBuilder().setResource("a/forced").build()).getReleased())
        .isTrue();
    acquire(teamB, "b/forced");
    assertDenied(codeOf(() -> a.describe(DescribeRequest.newBuilder().setResource("b/forced").build())),
        teamA, "Describe", "b/forced");
    assertDenied(codeOf(() -> a.forceRelease(ForceReleaseRequest.newBuilder().setResource("b/forced").build())),
        teamA, "ForceRelease", "b/forced");
    // A lock grant is not a force-release grant, even on the caller's own prefix.
    assertDenied(codeOf(() -> teamB.locks(channel()).forceRelease(ForceReleaseRequest.newBuilder()
        .setResource("b/forced").build())), teamB, "ForceRelease", "b/forced");
    assertThat(teamB.locks(channel()).describe(DescribeRequest.newBuilder().setResource("b/forced").build())
        .getHeld()).isTrue();
  }

  /** A semaphore's permit, through Acquire's permits field. */
  private static dev.redlockd.proto.v1.AcquireRequest permitRequest(String resource, int permits) {
    return acquireRequest(resource, Duration.ofSeconds(20), Duration.ZERO, "").toBuilder().setPermits(permits).build();
  }

  @Test
  void semaphoresAreGovernedByThePrefixRulesOfTheResourceAsNamed() throws Exception {
    LockServiceGrpc.LockServiceBlockingStub a = teamA.locks(channel());
    Lease own = a.acquire(permitRequest("a/sem", 2)).getLease();
    assertThat(own.getPermit()).isBetween(1, 2);
    assertThat(a.extend(ExtendRequest.newBuilder().setResource("a/sem").setToken(own.getToken())
        .setPermit(own.getPermit()).setTtl(proto(Duration.ofSeconds(20))).build()).getLease().getPermit())
        .isEqualTo(own.getPermit());
    assertThat(a.describe(DescribeRequest.newBuilder().setResource("a/sem").build()).getPermits()).isEqualTo(2);
    assertThat(a.forceRelease(ForceReleaseRequest.newBuilder().setResource("a/sem").setPermit(own.getPermit())
        .build()).getReleased()).isTrue();

    assertDenied(codeOf(() -> a.acquire(permitRequest("b/sem", 2))), teamA, "Acquire", "b/sem");
    Lease theirs = teamB.locks(channel()).acquire(permitRequest("b/sem", 2)).getLease();
    // The holder's token and permit in hand are not enough on another tenant's prefix.
    assertDenied(codeOf(() -> a.extend(ExtendRequest.newBuilder().setResource("b/sem").setToken(theirs.getToken())
        .setPermit(theirs.getPermit()).setTtl(proto(Duration.ofSeconds(5))).build())), teamA, "Extend", "b/sem");
    assertDenied(codeOf(() -> a.release(ReleaseRequest.newBuilder().setResource("b/sem").setToken(theirs.getToken())
        .setPermit(theirs.getPermit()).build())), teamA, "Release", "b/sem");
    StreamEnd<KeepAliveResponse> refused = new StreamEnd<>();
    teamA.asyncLocks(channel()).keepAlive(refused).onNext(KeepAliveRequest.newBuilder().setResource("b/sem")
        .setToken(theirs.getToken()).setPermit(theirs.getPermit()).setTtl(proto(Duration.ofSeconds(3))).build());
    assertDenied(refused.status(10), teamA, "KeepAlive", "b/sem");
    assertDenied(codeOf(() -> a.describe(DescribeRequest.newBuilder().setResource("b/sem").build())),
        teamA, "Describe", "b/sem");
    assertDenied(codeOf(() -> a.forceRelease(ForceReleaseRequest.newBuilder().setResource("b/sem")
        .setPermit(theirs.getPermit()).build())), teamA, "ForceRelease", "b/sem");
    assertDenied(codeOf(() -> teamB.locks(channel()).forceRelease(ForceReleaseRequest.newBuilder()
        .setResource("b/sem").setPermit(theirs.getPermit()).build())), teamB, "ForceRelease", "b/sem");
    DescribeResponse still = teamB.locks(channel()).describe(DescribeRequest.newBuilder().setResource("b/sem").build());
    assertThat(still.getHoldersCount()).as("the refused calls changed nothing").isEqualTo(1);
    assertThat(teamB.locks(channel()).release(ReleaseRequest.newBuilder().setResource("b/sem")
        .setToken(theirs.getToken()).setPermit(theirs.getPermit()).build()).getReleased()).isTrue();
  }

  @Test
  void electionRpcsAreGovernedLikeLocks() throws Exception {
    StreamEnd<CampaignResponse> campaign = new StreamEnd<>();
    StreamObserver<CampaignRequest> candidate = teamA.asyncElections(channel()).campaign(campaign);
    candidate.onNext(CampaignRequest.newBuilder().setElection("a/election").setValue("a-1")
        .setTtl(proto(Duration.ofSeconds(5))).build());
    assertThat(campaign.next(10)).as("team-a leads its own election").isNotNull();
    assertThat(teamA.elections(channel()).leader(LeaderRequest.newBuilder().setElection("a/election").build())
        .getLeader().getValue()).isEqualTo("a-1");
    var observed = teamA.elections(channel()).observe(ObserveRequest.newBuilder().setElection("a/election").build());
    ObserveResponse firstSeen = observed.next();
    assertThat(firstSeen.getLeader().getValue()).isEqualTo("a-1");
    candidate.onCompleted();
    assertThat(campaign.status(10).isOk()).isTrue();

    StreamEnd<CampaignResponse> refused = new StreamEnd<>();
    teamA.asyncElections(channel()).campaign(refused).onNext(CampaignRequest.newBuilder().setElection("b/election")
        .setValue("a-1").setTtl(proto(Duration.ofSeconds(5))).build());
    assertDenied(refused.status(10), teamA, "Campaign", "b/election");
    assertDenied(codeOf(() -> teamA.elections(channel()).leader(LeaderRequest.newBuilder()
        .setElection("b/election").build())), teamA, "Leader", "b/election");
    assertDenied(codeOf(() -> teamA.elections(channel()).observe(ObserveRequest.newBuilder()
        .setElection("b/election").build()).next()), teamA, "Observe", "b/election");
  }

  @Test
  void wildcardIdentitiesAreGovernedByTheirMostSpecificEntry() {
    Lease lease = acquire(teamB, "b/wild");
    LockServiceGrpc.LockServiceBlockingStub r = reader.locks(channel());
    assertThat(r.describe(DescribeRequest.newBuilder().setResource("b/wild").build()).getHeld()).isTrue();
    // svc/b-reader has an entry of its own: svc/*'s lock grant is not merged into it.
    assertDenied(codeOf(() -> r.acquire(acquireRequest("b/reader", Duration.ofSeconds(5), Duration.ZERO, ""))),
        reader, "Acquire", "b/reader");
    assertDenied(codeOf(() -> stranger.locks(channel()).describe(DescribeRequest.newBuilder().setResource("b/wild")
        .build())), stranger, "Describe", "b/wild");
    assertThat(teamB.locks(channel()).release(ReleaseRequest.newBuilder().setResource("b/wild")
        .setToken(lease.getToken()).build()).getReleased()).isTrue();
  }

  @Test
  void callsWithoutAnAcceptableIdentityAreUnauthenticated() throws Exception {
    LockServiceGrpc.LockServiceBlockingStub anonymous = LockServiceGrpc.newBlockingStub(channel())
        .withDeadlineAfter(10, TimeUnit.SECONDS);
    Status none = codeOf(() -> anonymous.acquire(acquireRequest("a/x", Duration.ofSeconds(5), Duration.ZERO, "")));
    assertThat(none.getCode()).as(none.toString()).isEqualTo(Status.Code.UNAUTHENTICATED);
    Tenant forged = Tenant.named("team-a"); // the right name, a token the file does not hold
    Status unknown = codeOf(() -> forged.locks(channel()).describe(DescribeRequest.newBuilder().setResource("a/x")
        .build()));
    assertThat(unknown.getCode()).as(unknown.toString()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(unknown.getDescription()).doesNotContain(forged.token());

    StreamEnd<KeepAliveResponse> stream = new StreamEnd<>();
    LockServiceGrpc.newStub(channel()).keepAlive(stream).onNext(KeepAliveRequest.newBuilder().setResource("a/x")
        .build());
    assertThat(stream.status(10).getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    // Health and reflection are not governed: load balancers and grpcurl need no identity.
    assertThat(HealthGrpc.newBlockingStub(channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
    assertThat(server.log()).contains("access control: policy " + dir.resolve("policy.json") + " (3 entries)")
        .contains("denied Acquire from").doesNotContain(forged.token());
  }

  @Test
  void describeNamesTheHoldersIdentityBesideItsOwnerTextOnEveryReplica() throws Exception {
    LockServiceGrpc.LockServiceBlockingStub a = teamA.locks(channel());
    Lease held = a.acquire(acquireRequest("a/described", Duration.ofSeconds(20), Duration.ZERO, "").toBuilder()
        .setOwner("worker 7").build()).getLease();
    DescribeResponse seen = a.describe(DescribeRequest.newBuilder().setResource("a/described").build());
    assertThat(seen.getOwner()).isEqualTo("worker 7");
    assertThat(seen.getHolderIdentity()).isEqualTo("team-a");

    try (ServerProcess open = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", "250ms")) {
      LockServiceGrpc.LockServiceBlockingStub anyone = LockServiceGrpc.newBlockingStub(open.channel())
          .withDeadlineAfter(10, TimeUnit.SECONDS);
      DescribeResponse elsewhere = anyone.describe(DescribeRequest.newBuilder().setResource("a/described").build());
      assertThat(elsewhere.getOwner()).as("read through another replica").isEqualTo("worker 7");
      assertThat(elsewhere.getHolderIdentity()).isEqualTo("team-a");

      // Without a policy there is no identity, and no owner text can pass itself off as one.
      String forged = "\u001eteam-a\u001eworker 8";
      anyone.acquire(acquireRequest("b/forged-holder", Duration.ofSeconds(20), Duration.ZERO, "").toBuilder()
          .setOwner(forged).build());
      DescribeResponse forgery = anyone.describe(DescribeRequest.newBuilder().setResource("b/forged-holder").build());
      assertThat(forgery.getOwner()).isEqualTo(forged);
      assertThat(forgery.getHolderIdentity()).isEmpty();
    }
    assertThat(a.release(ReleaseRequest.newBuilder().setResource("a/described").setToken(held.getToken()).build())
        .getReleased()).isTrue();
  }

  @Test
  void aServerWithoutAPolicySaysItIsOpen() throws Exception {
    try (ServerProcess open = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", "250ms")) {
      assertThat(open.log()).contains("access control: OPEN");
      assertThat(LockServiceGrpc.newBlockingStub(open.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
          .describe(DescribeRequest.newBuilder().setResource("b/anything").build()).getHeld()).isFalse();
    }
  }

  @Test
  void filesThatDoNotLoadStopStartUpWithAOneLineReason() throws Exception {
    Path policy = dir.resolve("policy.json");
    Path tokens = dir.resolve("tokens");
    Path typo = Files.writeString(dir.resolve("typo.json"),
        "{\"version\": 1, \"identities\": [{\"identity\": \"x\", \"lokc\": [\"a/\"]}]}");
    Path truncated = Files.writeString(dir.resolve("truncated.json"), POLICY.substring(0, POLICY.length() / 2));
    Path badTokens = Files.writeString(dir.resolve("bad-tokens"), teamA.tokenLine() + "\n" + teamA.token() + "\n");
    Path missing = dir.resolve("missing.json");
    List<List<String>> cases = List.of(
        List.of("--policy", typo.toString()),
        List.of("--policy", truncated.toString()),
        List.of("--policy", policy.toString(), "--tokens", badTokens.toString()),
        List.of("--policy", missing.toString()),
        List.of("--tokens", tokens.toString()),
        List.of("--bind", "0.0.0.0", "--policy", policy.toString(), "--tokens", tokens.toString()));
    String[] expected = {
        "--policy " + typo + ": identities[0]: unknown key \"lokc\"",
        "--policy " + truncated + ": policy: not valid JSON",
        "--tokens " + badTokens + ": token file line 2",
        "--policy " + missing + ": no such file",
        "--tokens needs --policy",
        "--tokens without --tls-cert would send bearer tokens in clear to --bind 0.0.0.0",
    };
    for (int i = 0; i < cases.size(); i++) {
      List<String> flags = new java.util.ArrayList<>(List.of("--redis", cluster.redisFlag()));
      if (!cases.get(i).contains("--bind")) {
        flags.addAll(List.of("--bind", "127.0.0.1")); // plaintext tokens are refused off loopback
      }
      flags.addAll(cases.get(i));
      String[] result = StartUp.run(flags);
      assertThat(result[0]).as(result[1]).isEqualTo("2");
      assertThat(result[1]).startsWith("redlockd: ").doesNotContain("\n").doesNotContain("Exception")
          .contains(expected[i]).doesNotContain(teamA.token());
    }
  }

  /**
   * A bearer header past grpc-java's 8 KiB header default is still answered UNAUTHENTICATED (the
   * transport takes 64 KiB of metadata; the interceptor refuses any credential over 4 KiB), not a
   * bare HTTP 431 that clients see as UNKNOWN. Over a real socket: in-process has no such limit.
   */
  @Test
  void anOversizedBearerTokenIsUnauthenticated() {
    for (int size : new int[] {10 * 1024, 40 * 1024, 4 * 1024 + 1}) {
      String token = "x".repeat(size);
      Status status = codeOf(() -> LockServiceGrpc.newBlockingStub(io.grpc.ClientInterceptors.intercept(channel(),
          Tenant.bearer(token))).withDeadlineAfter(10, TimeUnit.SECONDS)
          .describe(DescribeRequest.newBuilder().setResource("a/x").build()));
      assertThat(status.getCode()).as(size + " characters: " + status).isEqualTo(Status.Code.UNAUTHENTICATED);
      assertThat(status.getDescription()).contains("4096").doesNotContain(token);
    }
    String fits = "x".repeat(4 * 1024 - "Bearer ".length());
    Status unknown = codeOf(() -> LockServiceGrpc.newBlockingStub(io.grpc.ClientInterceptors.intercept(channel(),
        Tenant.bearer(fits))).withDeadlineAfter(10, TimeUnit.SECONDS)
        .describe(DescribeRequest.newBuilder().setResource("a/x").build()));
    assertThat(unknown.getCode()).as(unknown.toString()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(unknown.getDescription()).contains("not known");
  }
}
