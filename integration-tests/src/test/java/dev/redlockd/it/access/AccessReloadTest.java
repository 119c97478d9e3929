package dev.redlockd.it.access;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.Resend;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import dev.redlockd.testing.UntilAvailable;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The policy reloaded on a live server process: on file change and on SIGHUP. One server for
 * the class: each test starts from {@link #GRANTS_A} and both tokens (reloaded by SIGHUP when
 * the test before changed them) and works on resources of its own.
 */
class AccessReloadTest {
  private static final String GRANTS_A = """
      {"version": 1, "identities": [
        {"identity": "team-a", "lock": ["a/"], "describe": ["a/"]},
        {"identity": "ops", "describe": [""]}
      ]}
      """;
  private static final String GRANTS_A_AND_C = """
      {"version": 1, "identities": [
        {"identity": "team-a", "lock": ["a/", "c/"], "describe": ["a/"]},
        {"identity": "ops", "describe": [""]}
      ]}
      """;
  private static final String REVOKES_A = """
      {"version": 1, "identities": [
        {"identity": "team-a", "describe": ["a/"]},
        {"identity": "ops", "describe": [""]}
      ]}
      """;

  @TempDir
  static Path dir;
  private static RedisCluster cluster;
  private static ServerProcess server;
  private static Path policy;
  private static Path tokens;
  private static final Tenant teamA = Tenant.named("team-a");
  private static final Tenant ops = Tenant.named("ops");
  private static final String BOTH_TOKENS = teamA.tokenLine() + "\n" + ops.tokenLine() + "\n";
  /** Whether the last test rewrote the policy or the tokens. */
  private static boolean changed;
  /** Where the server's log stood when the current test began. */
  private int logAtStart;

  @BeforeAll
  static void start() throws Exception {
    cluster = RedisCluster.start(3);
    policy = Files.writeString(dir.resolve("policy.json"), GRANTS_A);
    tokens = Files.writeString(dir.resolve("tokens"), BOTH_TOKENS);
    server = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", "250ms", "--bind", "127.0.0.1",
        "--policy", policy.toString(), "--tokens", tokens.toString());
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      server.close();
    } finally {
      cluster.close();
    }
  }

  @BeforeEach
  void restore() throws Exception {
    if (changed) {
      writePolicy(GRANTS_A);
      writeTokens(BOTH_TOKENS);
      reloadNow();
      changed = false;
    }
    logAtStart = server.log().length();
  }

  /** What the server logged since the current test began. */
  private String log() {
    return server.log().substring(logAtStart);
  }

  /** Replaced whole, as an editor or a config-management tool would: never seen half-written. */
  private static void writePolicy(String text) throws Exception {
    changed = true;
    Path next = Files.writeString(dir.resolve("policy.json.next"), text);
    Files.move(next, policy, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static void writeTokens(String text) throws Exception {
    changed = true;
    Path next = Files.writeString(dir.resolve("tokens.next"), text);
    Files.move(next, tokens, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static void hangup() throws Exception {
    Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(server.pid())).inheritIO().start();
    assertThat(kill.waitFor()).isZero();
  }

  /** SIGHUP, and waits until the reload it asked for is done (logged after the signal's own line). */
  private static void reloadNow() throws Exception {
    int before = server.log().length();
    hangup();
    eventually("the reload SIGHUP asked for", () -> {
      String since = server.log().substring(before);
      int signal = since.indexOf("SIGHUP: reloading the access policy");
      return signal >= 0 && since.indexOf("access policy reloaded", signal) >= 0;
    });
  }

  private static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  private static Status acquireOnce(String resource) {
    return codeOf(() -> teamA.locks(server.channel())
        .acquire(acquireRequest(resource, Duration.ofSeconds(5), Duration.ZERO, "")));
  }

  @Test
  void aChangedFileIsTakenUpAndABadOneIsKeptOut() throws Exception {
    assertThat(acquireOnce("c/1").getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    writePolicy(GRANTS_A_AND_C);
    eventually("the new grant applies", () -> acquireOnce("c/2").isOk());
    assertThat(log()).contains("access policy reloaded: policy " + policy + " (2 entries)");

    writePolicy("{\"version\": 1, \"identities\": [{\"identity\": \"team-a\", \"lock\": \"c/\"}]}");
    eventually("the bad file is reported", () -> log().contains("access policy not reloaded"));
    assertThat(log()).contains("access policy not reloaded, the previous one stays in force: --policy "
        + policy + ": identities[0].lock: must be an array");
    Thread.sleep(2_500); // two more polls of the same bad bytes
    assertThat(log().split("access policy not reloaded", -1)).as("reported once").hasSize(2);
    assertThat(acquireOnce("c/3").isOk()).as("the previous policy is still in force").isTrue();
    assertThat(acquireOnce("a/3").isOk()).isTrue();
  }

  @Test
  void sighupReloadsAtOnce() throws Exception {
    writePolicy(GRANTS_A_AND_C);
    hangup();
    eventually("SIGHUP reloads", () -> log().contains("SIGHUP: reloading the access policy"));
    eventually("the new grant applies", () -> acquireOnce("c/hup").isOk());
    assertThat(server.isAlive()).as("SIGHUP does not stop the server").isTrue();
  }

  @Test
  void aRevokedGrantStopsRenewalsButBreaksNoLease() throws Exception {
    // The test's own calls are retried on UNAVAILABLE (a round short of a quorum within the node
    // timeout on a busy machine): their fate is not the claim, the reload's is.
    Lease unary = UntilAvailable.call(() -> teamA.locks(server.channel())
        .acquire(acquireRequest("a/unary", Duration.ofSeconds(30), Duration.ZERO, "")).getLease());
    Lease kept = UntilAvailable.call(() -> teamA.locks(server.channel())
        .acquire(acquireRequest("a/kept", Duration.ofSeconds(30), Duration.ZERO, "")).getLease());
    StreamEnd<KeepAliveResponse> stream = new StreamEnd<>();
    StreamObserver<KeepAliveRequest> requests = teamA.asyncLocks(server.channel()).keepAlive(stream);
    requests.onNext(KeepAliveRequest.newBuilder().setResource("a/kept").setToken(kept.getToken())
        .setTtl(proto(Duration.ofMillis(1_500))).setSequence(1).build());
    assertThat(stream.next(10)).isNotNull();
    Resend.everyQuarterOf(Duration.ofMillis(1_500), requests, sequence -> KeepAliveRequest.newBuilder()
        .setResource("a/kept").setToken(kept.getToken()).setTtl(proto(Duration.ofMillis(1_500)))
        .setSequence(sequence).build(), 2, stream.end);

    writePolicy(REVOKES_A);
    // The server's own next renewal tick (every 500 ms here) is refused.
    Status streamEnd = stream.status(10);
    assertThat(streamEnd.getCode()).as(streamEnd.toString()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(streamEnd.getDescription()).contains("'team-a'", "KeepAlive", "'a/kept'");
    Status extend = codeOf(() -> teamA.locks(server.channel()).extend(ExtendRequest.newBuilder()
        .setResource("a/unary").setToken(unary.getToken()).setTtl(proto(Duration.ofSeconds(30))).build()));
    assertThat(extend.getCode()).as(extend.toString()).isEqualTo(Status.Code.PERMISSION_DENIED);

    // The reload broke neither lease: both are still held, and the kept one runs out at its validity.
    assertThat(held("a/unary")).isTrue();
    assertThat(held("a/kept")).isTrue();
    eventually("the kept lease runs out", () -> !held("a/kept"));
  }

  private static boolean held(String resource) {
    return UntilAvailable.call(() -> ops.locks(server.channel())
        .describe(DescribeRequest.newBuilder().setResource(resource).build()).getHeld());
  }

  @Test
  void aRevokedGrantEndsACampaignAtItsNextRenewal() throws Exception {
    StreamEnd<CampaignResponse> campaign = new StreamEnd<>();
    StreamObserver<CampaignRequest> candidate = teamA.asyncElections(server.channel()).campaign(campaign);
    CampaignRequest leads = CampaignRequest.newBuilder().setElection("a/election").setValue("a-1")
        .setTtl(proto(Duration.ofMillis(1_500))).build();
    candidate.onNext(leads);
    assertThat(campaign.next(10)).as("team-a leads").isNotNull();
    Resend.everyQuarterOf(Duration.ofMillis(1_500), candidate, sequence -> leads.toBuilder().setSequence(sequence)
        .build(), 1, campaign.end);

    writePolicy(REVOKES_A);
    Status end = campaign.status(10);
    assertThat(end.getCode()).as(end.toString()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(end.getDescription()).contains("'team-a'", "Campaign", "'a/election'");
    // Not resigned: the leadership runs out at its validity.
    eventually("the leadership runs out", () -> !UntilAvailable.call(() -> ops.elections(server.channel())
        .leader(LeaderRequest.newBuilder().setElection("a/election").build()).hasLeader()));
  }

  /**
   * A token taken out of the token file reaches the streams it opened: each ends UNAUTHENTICATED at
   * its next renewal (Observe, which renews nothing, at the reload), and nothing is released: the
   * lease and the leadership stay on the nodes until their ttl runs out, as their holders believed.
   */
  @Test
  void aRemovedTokenEndsItsOpenStreamsUnauthenticatedAndReleasesNothing() throws Exception {
    Lease kept = UntilAvailable.call(() -> teamA.locks(server.channel())
        .acquire(acquireRequest("a/kept-by-token", Duration.ofSeconds(30), Duration.ZERO, "")).getLease());
    StreamEnd<KeepAliveResponse> keepAlive = new StreamEnd<>();
    StreamObserver<KeepAliveRequest> requests = teamA.asyncLocks(server.channel()).keepAlive(keepAlive);
    requests.onNext(KeepAliveRequest.newBuilder().setResource("a/kept-by-token").setToken(kept.getToken())
        .setTtl(proto(Duration.ofSeconds(6))).setSequence(1).build());
    assertThat(keepAlive.next(10)).isNotNull();
    Resend.everyQuarterOf(Duration.ofSeconds(6), requests, sequence -> KeepAliveRequest.newBuilder()
        .setResource("a/kept-by-token").setToken(kept.getToken()).setTtl(proto(Duration.ofSeconds(6)))
        .setSequence(sequence).build(), 2, keepAlive.end);
    StreamEnd<CampaignResponse> campaign = new StreamEnd<>();
    StreamObserver<CampaignRequest> candidate = teamA.asyncElections(server.channel()).campaign(campaign);
    CampaignRequest leads = CampaignRequest.newBuilder().setElection("a/led-by-token").setValue("a-1")
        .setTtl(proto(Duration.ofSeconds(6))).build();
    candidate.onNext(leads);
    assertThat(campaign.next(10)).as("team-a leads").isNotNull();
    Resend.everyQuarterOf(Duration.ofSeconds(6), candidate, sequence -> leads.toBuilder().setSequence(sequence)
        .build(), 1, campaign.end);
    StreamEnd<ObserveResponse> observe = new StreamEnd<>();
    teamA.asyncElections(server.channel()).observe(ObserveRequest.newBuilder().setElection("a/led-by-token")
        .build(), observe);
    assertThat(observe.next(10)).isNotNull();

    writeTokens(ops.tokenLine() + "\n");
    for (StreamEnd<?> stream : java.util.List.of(keepAlive, campaign, observe)) {
      Status end = stream.status(10);
      assertThat(end.getCode()).as(end.toString()).isEqualTo(Status.Code.UNAUTHENTICATED);
      assertThat(end.getDescription()).doesNotContain(teamA.token());
    }
    // Not released: a quorum still holds both keys with their holders' tokens...
    String lockKey = "redlock:{a/kept-by-token}:lock";
    String leaderKey = "redlock:election:{a/led-by-token}:lock";
    for (int node = 0; node < cluster.size(); node++) {
      assertThat(cluster.lockHolder(node, lockKey)).as("lease on node " + node).isEqualTo(kept.getToken());
      assertThat(cluster.get(node, leaderKey)).as("leadership on node " + node).isNotNull();
    }
    // ...until their ttl runs out, unrenewed.
    eventually("the lease runs out", () -> cluster.get(0, lockKey) == null && cluster.get(1, lockKey) == null
        && cluster.get(2, lockKey) == null);
    eventually("the leadership runs out", () -> cluster.get(0, leaderKey) == null);
    assertThat(server.log()).doesNotContain(teamA.token());
  }
}
