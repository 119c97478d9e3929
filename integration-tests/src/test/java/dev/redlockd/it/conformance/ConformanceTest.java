package dev.redlockd.it.conformance;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.DescribeResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.LeaderResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Scrape;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The client conformance suite (clients/conformance/README.md): every scenario, run by every
 * language's runner against the real server and 5 real Redis nodes. The runners only report
 * what they saw; every expectation is here, and is checked against Redis and the server too
 * where they can tell.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConformanceTest {
  private static final Duration STEP = Duration.ofSeconds(30);
  private static final List<String> SCENARIOS = List.of("acquire-contended", "release-twice", "extend", "keep-alive",
      "majority-frozen", "lost-answer", "invalid-argument", "concurrent-holders", "campaign-handover", "observe",
      "extend-while-kept", "replica-restart", "shutdown-race", "lead", "permits");
  /** The permits scenario's N: the runner's N + 3 workers share that many permits. */
  private static final int PERMITS = 3;
  /** shutdown-race's SIGTERMs per runner: 30 over the five, in a suite that must stay under 15 minutes. */
  private static final int SHUTDOWN_ROUNDS = 6;
  /** The belief oracle's findings, one line per language and scenario, printed at the end. */
  private final Map<String, String> oracleReport = new ConcurrentSkipListMap<>();

  private final Path root = Runtimes.repositoryRoot();
  private RedisCluster cluster;
  /** The server with default flags, for every scenario but lost-answer. */
  private ServerProcess server;
  /** A server that waits 2 s for a node, so that a paused node delays an answer instead of failing it. */
  private ServerProcess patient;
  private int patientMetricsPort;
  private LockServiceGrpc.LockServiceBlockingStub harness;
  private ElectionServiceGrpc.ElectionServiceBlockingStub elections;
  /** Tokens read from Redis during the current scenario: none may appear in the runner's output. */
  private final Set<String> tokens = new HashSet<>();

  @BeforeAll
  void start() throws IOException {
    cluster = RedisCluster.start(5);
    server = ServerProcess.start("--redis", cluster.redisFlag());
    patientMetricsPort = freePort();
    patient = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", "2s",
        "--metrics-port", Integer.toString(patientMetricsPort));
    harness = LockServiceGrpc.newBlockingStub(server.channel());
    elections = ElectionServiceGrpc.newBlockingStub(server.channel());
  }

  @AfterAll
  void stop() throws InterruptedException {
    System.out.println("belief oracle (tolerance " + (long) BeliefOracle.TOLERANCE_MS
        + " ms; excess = how much longer a valid belief ran than a quorum of nodes held the key; negative is safe):");
    oracleReport.forEach((k, v) -> System.out.println("  " + k + ": " + v));
    try {
      if (patient != null) {
        patient.close();
      }
      if (server != null) {
        server.close();
      }
    } finally {
      if (cluster != null) {
        cluster.close();
      }
    }
  }

  /**
   * Every language and scenario; {@code -Dconformance.languages=python,go} runs only those
   * languages, {@code -Dconformance.scenarios=observe,extend} only those scenarios.
   */
  static Stream<Arguments> cases() {
    String only = System.getProperty("conformance.languages", "");
    String scenarios = System.getProperty("conformance.scenarios", "");
    return Stream.of(Language.values())
        .filter(l -> only.isBlank() || List.of(only.split(",")).contains(l.id))
        .flatMap(l -> SCENARIOS.stream()
            .filter(s -> scenarios.isBlank() || List.of(scenarios.split(",")).contains(s))
            .map(s -> Arguments.of(l, s)));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void scenario(Language language, String scenario) throws Exception {
    ClientBuilds.assumeBuilt(language);
    tokens.clear();
    String resource = "conformance/" + language.id + "/" + scenario;
    ServerProcess target = scenario.equals("lost-answer") ? patient : server;
    ReplicaSet replicas = switch (scenario) {
      case "replica-restart", "permits" -> ReplicaSet.start(2, cluster.redisFlag());
      case "shutdown-race" -> ReplicaSet.start(3, cluster.redisFlag());
      default -> null;
    };
    String servers = replicas != null ? replicas.addresses() : "127.0.0.1:" + target.port();
    List<String> command = new ArrayList<>(language.runner(root));
    command.addAll(List.of("--server", servers, "--scenario", scenario, "--resource", resource));
    try (ReplicaSet closedLast = replicas;
        BeliefOracle oracle = new BeliefOracle(nodePorts(), 3,
            Map.of("lease", lockKey(resource), "leadership", electionKey(resource)));
        RunnerProcess runner = RunnerProcess.start(command, root)) {
      runner.onAwait(oracle::sampleNow);
      switch (scenario) {
        case "acquire-contended" -> acquireContended(runner, resource);
        case "release-twice" -> releaseTwice(runner, resource);
        case "extend" -> extend(runner, resource);
        case "keep-alive" -> keepAlive(runner, resource);
        case "majority-frozen" -> majorityFrozen(runner, resource);
        case "lost-answer" -> lostAnswer(runner, resource);
        case "invalid-argument" -> invalidArgument(runner);
        case "concurrent-holders" -> concurrentHolders(runner);
        case "campaign-handover" -> campaignHandover(runner, resource);
        case "observe" -> observe(runner);
        case "extend-while-kept" -> extendWhileKept(runner, resource);
        case "replica-restart" -> replicaRestart(runner, resource, replicas);
        case "shutdown-race" -> shutdownRace(runner, resource, replicas, language);
        case "lead" -> lead(runner, resource);
        case "permits" -> permits(runner, resource, replicas);
        default -> throw new IllegalArgumentException(scenario);
      }
      oracle.close();
      List<String> held = switch (scenario) {
        case "invalid-argument", "concurrent-holders", "permits" -> List.of();
        case "campaign-handover", "observe", "lead" -> List.of("leadership");
        case "replica-restart" -> List.of("lease", "leadership");
        default -> List.of("lease");
      };
      // One belief at least: release-twice holds its lease for only as long as the harness checks the nodes.
      for (BeliefOracle.Verdict v : oracle.judge(runner.beliefs(), held, 1)) {
        if (v.judged() > 0) {
          oracleReport.put(language.id + " " + scenario + " " + v.handle(),
              String.format("largest excess %.1f ms over %d beliefs (%d not judged: no reading between them and "
                  + "the release)", v.largestExcessMs(), v.judged(), v.unjudged()));
        }
      }
      String transcript = runner.transcript();
      for (String token : tokens) {
        assertThat(transcript).as("the runner's output must not contain a token").doesNotContain(token);
      }
    }
  }

  private void acquireContended(RunnerProcess runner, String resource) throws Exception {
    runner.expectAwait("held", STEP);
    assertHeldByAMajority(resource);
    runner.answer();
    JsonObject r = runner.result(STEP);
    assertThat(Long.parseUnsignedLong(r.get("fencing_token").getAsString())).isPositive();
    assertThat(r.get("valid").getAsBoolean()).isTrue();
    assertThat(r.get("remaining_ms").getAsDouble()).isGreaterThan(0).isLessThanOrEqualTo(10_000);
    assertThat(r.get("try_acquire").getAsString()).isEqualTo("none");
    JsonObject competitor = r.getAsJsonObject("competitor_error");
    assertThat(competitor.get("code").getAsString()).isEqualTo("ABORTED");
    assertThat(competitor.get("type").getAsString()).as("the language's not-acquired error").containsIgnoringCase("NotAcquired");
    assertThat(r.get("released").getAsBoolean()).isTrue();
    assertFree(resource);
  }

  private void releaseTwice(RunnerProcess runner, String resource) throws Exception {
    runner.expectAwait("held", STEP);
    assertHeldByAMajority(resource);
    runner.answer();
    JsonObject r = runner.result(STEP);
    assertThat(r.get("first_release").getAsBoolean()).isTrue();
    assertThat(r.get("second_release").getAsBoolean()).isFalse();
    assertThat(r.get("valid_after").getAsBoolean()).isFalse();
    assertFree(resource);
  }

  private void extend(RunnerProcess runner, String resource) throws Exception {
    runner.expectAwait("extended", STEP);
    assertHeldByAMajority(resource);
    long holdingLongEnough = 0;
    for (int i = 0; i < cluster.size(); i++) {
      Object pttl = cluster.call(i, "PTTL", lockKey(resource));
      if (pttl instanceof Long ms && ms > 2_000) {
        holdingLongEnough++;
      }
    }
    assertThat(holdingLongEnough).as("nodes whose lock key outlives the first ttl by the extension").isGreaterThanOrEqualTo(3);
    runner.answer();
    JsonObject r = runner.result(STEP);
    assertThat(r.get("remaining_after_extend_ms").getAsDouble()).isGreaterThan(2_000).isLessThanOrEqualTo(3_000);
    assertThat(r.get("valid_after_first_ttl").getAsBoolean()).isTrue();
    assertThat(r.get("released").getAsBoolean()).isTrue();
    assertFree(resource);
  }

  private void keepAlive(RunnerProcess runner, String resource) throws Exception {
    runner.expectAwait("kept", STEP);
    // 1.5 s into a 1 s ttl: only renewals keep it, and nobody else gets it.
    assertHeldByAMajority(resource);
    Status competitor = codeOf(() -> harness.acquire(acquireRequest(resource, Duration.ofSeconds(1), Duration.ZERO, "")));
    assertThat(competitor.getCode()).isEqualTo(Status.Code.ABORTED);
    runner.answer();
    JsonObject r = runner.result(STEP);
    assertThat(r.get("valid_at_end").getAsBoolean()).isTrue();
    assertThat(r.get("lost").getAsBoolean()).isFalse();
    assertThat(r.get("released").getAsBoolean()).isTrue();
    assertFree(resource);
  }

  private void majorityFrozen(RunnerProcess runner, String resource) throws Exception {
    runner.expectAwait("freeze", STEP);
    assertHeldByAMajority(resource);
    cluster.pause(0, 1, 2);
    JsonObject r;
    try {
      runner.answer();
      r = runner.result(STEP);
    } finally {
      cluster.resume(0, 1, 2);
    }
    assertThat(r.get("lost_calls").getAsInt()).as("loss callbacks").isEqualTo(1);
    assertThat(r.get("margin_ms").getAsDouble()).as("ms the loss came before the deadline").isPositive();
    assertThat(r.get("waited_ms").getAsDouble()).as("ms from the freeze to the loss").isLessThan(2_500);
    assertThat(r.get("valid_after_lost").getAsBoolean()).isFalse();
    assertThat(r.getAsJsonObject("lost_error").get("message").getAsString()).contains(resource);
    awaitQuorum();
  }

  private void lostAnswer(RunnerProcess runner, String resource) throws Exception {
    runner.expectAwait("pause", STEP);
    Scrape before = Scrape.of(patientMetricsPort);
    for (int i = 0; i < cluster.size(); i++) {
      cluster.call(i, "CLIENT", "PAUSE", "900");
    }
    runner.answer();
    runner.expectAwait("held", STEP);
    assertHeldByAMajority(resource);
    Scrape after = Scrape.of(patientMetricsPort);
    runner.answer();
    JsonObject r = runner.result(STEP);
    assertThat(r.get("acquired").getAsBoolean()).as("a retry with the same token is not blocked by its own lease").isTrue();
    assertThat(r.get("elapsed_ms").getAsDouble()).as("longer than one call's deadline").isGreaterThan(300);
    // The server ends a call whose deadline passed with DEADLINE_EXCEEDED, unless the client's
    // cancel reaches it first (a loaded machine): then CANCELLED. Either is the client giving up.
    long gaveUp = acquires(after, "DEADLINE_EXCEEDED") - acquires(before, "DEADLINE_EXCEEDED")
        + acquires(after, "CANCELLED") - acquires(before, "CANCELLED");
    assertThat(gaveUp).as("Acquire calls whose answer the client gave up on").isGreaterThanOrEqualTo(1);
    assertThat(acquires(after, "OK") - acquires(before, "OK")).as("Acquire calls granted").isGreaterThanOrEqualTo(1);
    assertThat(r.get("released").getAsBoolean()).as("one lease, released once").isTrue();
    assertFree(resource);
    awaitQuorum(); // the pause may have cost the servers' probes their answers
  }

  private void invalidArgument(RunnerProcess runner) throws Exception {
    JsonObject r = runner.result(STEP);
    for (String call : List.of("empty_resource", "zero_ttl", "long_resource")) {
      JsonObject error = r.getAsJsonObject(call);
      assertThat(error).as(call).isNotNull();
      assertThat(error.get("code").getAsString()).as(call).isEqualTo("INVALID_ARGUMENT");
      assertThat(error.get("type").getAsString()).as(call + ": the language's service error, not not-acquired")
          .doesNotContainIgnoringCase("NotAcquired");
    }
  }

  private void concurrentHolders(RunnerProcess runner) throws Exception {
    JsonObject r = runner.result(Duration.ofSeconds(90));
    record Section(double start, double end, long fence) {}
    List<Section> sections = new ArrayList<>();
    for (JsonElement e : r.getAsJsonArray("sections")) {
      JsonArray s = e.getAsJsonArray();
      sections.add(new Section(s.get(0).getAsDouble(), s.get(1).getAsDouble(), Long.parseUnsignedLong(s.get(2).getAsString())));
    }
    assertThat(sections).hasSize(40);
    sections.sort(Comparator.comparingDouble(Section::start));
    for (int i = 1; i < sections.size(); i++) {
      Section before = sections.get(i - 1);
      Section next = sections.get(i);
      assertThat(next.start()).as("section %d began before section %d ended", i, i - 1).isGreaterThanOrEqualTo(before.end());
      assertThat(Long.compareUnsigned(next.fence(), before.fence())).as("fencing tokens rise: %s then %s", before, next).isPositive();
    }
  }

  /**
   * N + 3 workers on a semaphore of N permits over two replicas: never more than N hold at once
   * (their reported intervals lie inside their grants), every permit is one of the N, and per
   * permit the holders follow one another with rising fencing tokens.
   */
  private void permits(RunnerProcess runner, String resource, ReplicaSet replicas) throws Exception {
    PermitHolds holds = new PermitHolds(PERMITS);
    long[] lastRead = {0};
    JsonObject r = runner.result(STEP, "permit", e -> {
      holds.add(e);
      if (System.nanoTime() - lastRead[0] > TimeUnit.MILLISECONDS.toNanos(100)) {
        lastRead[0] = System.nanoTime();
        rememberPermitTokens(resource); // for the check that none appears in the output
      }
    });
    assertThat(r.getAsJsonArray("errors")).as("errors the workers met").isEmpty();
    assertThat(r.get("acquired").getAsInt()).as("grants, against the permit lines").isEqualTo(holds.size());
    assertThat(holds.size()).as("acquisitions in 4 s").isGreaterThanOrEqualTo(PERMITS + 1);
    List<Integer> seen = new ArrayList<>();
    r.getAsJsonArray("permits_seen").forEach(p -> seen.add(p.getAsInt()));
    assertThat(seen).as("permits_seen").isEqualTo(holds.permitsSeen());
    holds.check();
    assertThat(tokens).as("permit tokens the harness read from the nodes during the run").isNotEmpty();
    System.out.println("permits: " + holds.size() + " grants, at most " + holds.mostAtOnce() + " of " + PERMITS
        + " held at once, permits " + seen);

    // Every permit was given back: the semaphore has no holder left, on either replica.
    for (int i = 0; i < 2; i++) {
      DescribeResponse d = LockServiceGrpc.newBlockingStub(replicas.server(i).channel())
          .describe(DescribeRequest.newBuilder().setResource(resource).build());
      assertThat(d.getHoldersList()).as("permits still held after the run (replica %d)", i).isEmpty();
    }
  }

  /** Reads the tokens of the semaphore's permits on every node, for the token check. */
  private void rememberPermitTokens(String resource) {
    for (int permit = 1; permit <= PERMITS; permit++) {
      for (int i = 0; i < cluster.size(); i++) {
        String token = cluster.lockHolder(i, "redlock:semaphore:{" + resource + "}:permit:" + permit);
        if (token != null) {
          tokens.add(token);
        }
      }
    }
  }

  private void campaignHandover(RunnerProcess runner, String election) throws Exception {
    runner.expectAwait("leading", STEP);
    assertKeyHeldByAMajority(electionKey(election), election);
    LeaderResponse seen = elections.leader(LeaderRequest.newBuilder().setElection(election).build());
    assertThat(seen.getLeader().getValue()).as("the leader the harness sees").isEqualTo("a");
    runner.answer();
    JsonObject r = runner.result(STEP);
    long termA = Long.parseUnsignedLong(r.get("term_a").getAsString());
    assertThat(termA).isPositive();
    assertThat(seen.getLeader().getTerm()).isEqualTo(termA);
    JsonObject c = r.getAsJsonObject("c_error");
    assertThat(c.get("code").getAsString()).isEqualTo("ABORTED");
    assertThat(c.get("type").getAsString()).as("the language's not-acquired error").containsIgnoringCase("NotAcquired");
    assertThat(r.get("b_led_early").getAsBoolean()).as("B led while A was leading").isFalse();
    assertThat(r.has("leader_after_proclaim")).as("leader_after_proclaim reported").isTrue();
    assertThat(leaderOf(r.get("leader_after_proclaim"))).isEqualTo(List.of("a2", Long.toUnsignedString(termA)));
    assertThat(r.get("resigned").getAsBoolean()).isTrue();
    assertThat(r.get("handover_ms").getAsDouble()).as("resign to the next leader, ms").isLessThan(1_000);
    assertThat(r.get("a_leader_after_resign").getAsBoolean()).isFalse();
    assertThat(r.get("a_lost").getAsBoolean()).as("a resign is not a loss").isFalse();
    assertThat(Long.compareUnsigned(Long.parseUnsignedLong(r.get("term_b").getAsString()), termA)).as("terms rise").isPositive();
    assertThat(r.get("b_value").getAsString()).isEqualTo("b");
    assertThat(r.get("b_is_leader").getAsBoolean()).isTrue();
    assertThat(r.get("b_resigned").getAsBoolean()).isTrue();
    assertThat(r.get("second_resign").getAsBoolean()).isFalse();
    assertThat(r.has("leader_at_end")).as("leader_at_end reported").isTrue();
    assertThat(leaderOf(r.get("leader_at_end"))).as("no leader at the end").isEqualTo(NONE);
    assertThat(elections.leader(LeaderRequest.newBuilder().setElection(election).build()).hasLeader()).isFalse();
  }

  private void observe(RunnerProcess runner) throws Exception {
    JsonObject r = runner.result(STEP);
    String termA = r.get("term_a").getAsString();
    String termB = r.get("term_b").getAsString();
    assertThat(Long.compareUnsigned(Long.parseUnsignedLong(termB), Long.parseUnsignedLong(termA))).isPositive();
    List<Object> events = new ArrayList<>();
    for (JsonElement e : r.getAsJsonArray("events")) {
      events.add(leaderOf(e));
    }
    assertThat(events).as("every change, in term order, none skipped or repeated")
        .containsExactly(NONE, List.of("a", termA), NONE, List.of("b", termB), NONE);
    assertThat(r.get("late_events").getAsInt()).as("callbacks after close").isZero();
  }

  private void extendWhileKept(RunnerProcess runner, String resource) throws Exception {
    runner.expectAwait("kept", STEP);
    assertHeldByAMajority(resource);
    runner.answer();
    runner.expectAwait("longer", STEP);
    assertThat(nodesWithPttl(resource, 4_000, Long.MAX_VALUE)).as("nodes holding R past 4 s after extend(6 s)")
        .isGreaterThanOrEqualTo(3);
    freezeServer(Duration.ofSeconds(3));
    runner.answer();
    runner.expectAwait("shorter", STEP);
    assertThat(nodesWithPttl(resource, 1, 1_000)).as("nodes holding R at most 1 s after extend(1 s)")
        .isGreaterThanOrEqualTo(3);
    freezeServer(Duration.ofMillis(2_500));
    runner.answer();
    JsonObject r = runner.result(STEP);
    assertThat(Long.parseUnsignedLong(r.get("fencing_token").getAsString())).isPositive();
    assertThat(r.get("valid_after_longer").getAsBoolean()).as("still valid after a 3 s freeze of a 6 s lease").isTrue();
    assertThat(r.get("remaining_after_shorter_ms").getAsDouble()).isPositive().isLessThanOrEqualTo(1_000);
    assertThat(r.get("lost_calls").getAsInt()).as("loss callbacks: the second freeze outlasts the 1 s ttl").isEqualTo(1);
    assertThat(r.get("valid_at_end").getAsBoolean()).isFalse();
    assertThat(r.get("released").getAsBoolean()).as("it ran out before the release").isFalse();
    assertFree(resource);
  }

  /** SIGSTOP on the server for {@code duration}, then SIGCONT. */
  private void freezeServer(Duration duration) throws InterruptedException {
    server.freeze();
    try {
      Thread.sleep(duration.toMillis());
    } finally {
      server.thaw();
    }
  }

  private void replicaRestart(RunnerProcess runner, String resource, ReplicaSet replicas) throws Exception {
    runner.expectAwait("kept", STEP);
    assertHeldByAMajority(resource);
    assertKeyHeldByAMajority(electionKey(resource), resource);
    try {
      for (boolean kill : new boolean[] {false, true}) {
        for (int i = 0; i < 2; i++) {
          replicas.restart(i, kill).get(60, TimeUnit.SECONDS);
          Thread.sleep(1_000); // the client resumes, and renews through the replica left or the new one
        }
      }
    } catch (AssertionError | Exception e) {
      throw new AssertionError("restarting the replicas failed:\n" + replicas.logs(), e);
    }
    assertHeldByAMajority(resource);
    runner.answer();
    JsonObject r = runner.result(STEP);
    assertThat(r.get("fencing_token_after").getAsString()).as("the same lease after four replica restarts")
        .isEqualTo(r.get("fencing_token").getAsString());
    assertThat(r.get("term_after").getAsString()).as("the same leadership after four replica restarts")
        .isEqualTo(r.get("term").getAsString());
    assertThat(r.get("valid").getAsBoolean()).isTrue();
    assertThat(r.get("is_leader").getAsBoolean()).isTrue();
    assertThat(r.get("lease_lost_calls").getAsInt()).as("lease loss callbacks").isZero();
    assertThat(r.get("leadership_lost_calls").getAsInt()).as("leadership loss callbacks").isZero();
    assertThat(r.get("released").getAsBoolean()).isTrue();
    assertThat(r.get("resigned").getAsBoolean()).isTrue();
    assertFree(resource);
    assertThat(elections.leader(LeaderRequest.newBuilder().setElection(resource).build()).hasLeader()).isFalse();
  }

  /**
   * Rule 1 under SIGTERM: each round, a competitor waits for R through one replica while another
   * replica (perhaps the one the holder's stream uses) shuts down and starts again. The holder
   * resumes its lease; no competitor may be granted it.
   */
  private void shutdownRace(RunnerProcess runner, String resource, ReplicaSet replicas, Language language)
      throws Exception {
    runner.expectAwait("held", STEP);
    assertHeldByAMajority(resource);
    List<CompletableFuture<Void>> restarts = new ArrayList<>(List.of(
        CompletableFuture.completedFuture(null), CompletableFuture.completedFuture(null),
        CompletableFuture.completedFuture(null)));
    int granted = 0;
    try {
      for (int round = 0; round < SHUTDOWN_ROUNDS; round++) {
        int victim = round % 3;
        int via = (round + 1) % 3;
        restarts.get(victim).get(60, TimeUnit.SECONDS);
        restarts.get(via).get(60, TimeUnit.SECONDS);
        var competitor = LockServiceGrpc.newBlockingStub(replicas.server(via).channel())
            .withDeadlineAfter(10, TimeUnit.SECONDS);
        CompletableFuture<Status> outcome = CompletableFuture.supplyAsync(() -> codeOf(() ->
            competitor.acquire(acquireRequest(resource, Duration.ofSeconds(2), Duration.ofMillis(1_200), ""))));
        Thread.sleep(100);
        restarts.set(victim, replicas.restart(victim, false));
        Status status = outcome.get(15, TimeUnit.SECONDS);
        if (status.isOk()) {
          granted++;
        }
        List<BeliefOracle.Belief> seen = runner.beliefs();
        BeliefOracle.Belief last = seen.isEmpty() ? null : seen.get(seen.size() - 1);
        assertThat(status.getCode()).as("round %d: the competitor through replica %d while replica %d shut down "
            + "(the holder's last belief: %s)", round, via, victim, last).isNotEqualTo(Status.Code.OK);
      }
      for (CompletableFuture<Void> restart : restarts) {
        restart.get(60, TimeUnit.SECONDS);
      }
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "\n" + replicas.logs(), e);
    }
    System.out.println("shutdown-race " + language.id + ": " + SHUTDOWN_ROUNDS + " SIGTERMs, " + granted
        + " competitors granted while the holder held");
    runner.answer();
    JsonObject r = runner.result(STEP);
    assertThat(r.get("fencing_token_after").getAsString()).isEqualTo(r.get("fencing_token").getAsString());
    assertThat(r.get("valid").getAsBoolean()).isTrue();
    assertThat(r.get("lost_calls").getAsInt()).isZero();
    assertThat(r.get("released").getAsBoolean()).isTrue();
    assertFree(resource);
  }

  /**
   * Run while leader: A's work is interrupted before A's deadline when a majority of nodes
   * freezes, A's lead then fails with the loss, and B (queued behind A) works only after that.
   */
  private void lead(RunnerProcess runner, String election) throws Exception {
    runner.expectAwait("leading", STEP);
    assertKeyHeldByAMajority(electionKey(election), election);
    LeaderResponse seen = elections.leader(LeaderRequest.newBuilder().setElection(election).build());
    assertThat(seen.getLeader().getValue()).as("the leader the harness sees").isEqualTo("a");
    runner.answer();
    runner.expectAwait("freeze", STEP);
    cluster.pause(0, 1, 2);
    try {
      runner.answer();
      runner.expectAwait("thaw", STEP);
    } finally {
      cluster.resume(0, 1, 2);
    }
    runner.answer();
    JsonObject r = runner.result(STEP);
    long termA = Long.parseUnsignedLong(r.get("term_a").getAsString());
    assertThat(termA).isPositive();
    assertThat(seen.getLeader().getTerm()).isEqualTo(termA);
    assertThat(r.has("cancel_margin_ms")).as("work_a saw its cancellation").isTrue();
    assertThat(r.get("cancel_margin_ms").getAsDouble()).as("ms work_a was cancelled before A's deadline").isPositive();
    assertThat(r.get("a_error").isJsonObject()).as("A's lead failed: " + r.get("a_error")).isTrue();
    JsonObject aError = r.getAsJsonObject("a_error");
    assertThat(aError.get("type").getAsString()).as("the language's leadership-lost error: " + aError)
        .containsIgnoringCase("Lost");
    assertThat(aError.get("code").getAsString()).as("a loss, not a cancellation: " + aError)
        .isNotIn("OK", "CANCELLED", "");
    assertThat(r.get("b_early").getAsBoolean()).as("B's work started while A led").isFalse();
    assertThat(r.has("b_after_a_ms")).as("B's work started").isTrue();
    assertThat(r.get("b_after_a_ms").getAsDouble()).as("ms from A's cancellation to B's work").isPositive();
    assertThat(Long.compareUnsigned(Long.parseUnsignedLong(r.get("term_b").getAsString()), termA)).as("terms rise")
        .isPositive();
    assertThat(r.get("b_result").isJsonPrimitive() ? r.get("b_result").getAsString() : r.get("b_result").toString())
        .as("B's lead returned normally").isEqualTo("ok");
    assertThat(elections.leader(LeaderRequest.newBuilder().setElection(election).build()).hasLeader())
        .as("B resigned when its work returned").isFalse();
    awaitQuorum();
  }

  /** How many nodes hold R's lock key with a PTTL in [min, max] ms. */
  private long nodesWithPttl(String resource, long min, long max) {
    long count = 0;
    for (int i = 0; i < cluster.size(); i++) {
      Object pttl = cluster.call(i, "PTTL", lockKey(resource));
      if (pttl instanceof Long ms && ms >= min && ms <= max) {
        count++;
      }
    }
    return count;
  }

  private List<Integer> nodePorts() {
    return cluster.uris().stream().map(uri -> Integer.parseInt(uri.substring(uri.lastIndexOf(':') + 1))).toList();
  }

  private static final String NONE = "none";

  /** A reported leader as {@code [value, term]}, or {@link #NONE}. */
  private static Object leaderOf(JsonElement reported) {
    if (reported.isJsonNull()) {
      return NONE;
    }
    JsonArray pair = reported.getAsJsonArray();
    return List.of(pair.get(0).getAsString(), pair.get(1).getAsString());
  }

  private long acquires(Scrape scrape, String code) {
    return (long) scrape.value("redlockd_rpc_calls_total", "method", "Acquire", "code", code);
  }

  /** A majority of nodes hold the same token for the resource; remembers it for the output check. */
  private void assertHeldByAMajority(String resource) {
    assertKeyHeldByAMajority(lockKey(resource), resource);
  }

  private void assertKeyHeldByAMajority(String key, String resource) {
    List<String> held = new ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      held.add(cluster.lockHolder(i, key));
    }
    held.stream().filter(Objects::nonNull).forEach(tokens::add);
    String first = held.stream().filter(Objects::nonNull).findFirst().orElse(null);
    assertThat(first).as("lock key of " + resource + " on any node").isNotNull();
    assertThat(held.stream().filter(first::equals).count()).as("nodes holding " + resource).isGreaterThanOrEqualTo(3);
  }

  /** Nobody holds the resource: the harness gets it at once (and gives it back). */
  private void assertFree(String resource) {
    var lease = harness.acquire(acquireRequest(resource, Duration.ofSeconds(2), Duration.ZERO, "")).getLease();
    harness.release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build());
  }

  /** After a freeze, both servers grant again once their probes see the nodes back. */
  private void awaitQuorum() {
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().untilAsserted(() -> {
      for (ServerProcess s : List.of(server, patient)) {
        var stub = LockServiceGrpc.newBlockingStub(s.channel());
        var lease = stub.acquire(acquireRequest("conformance/quorum-back", Duration.ofSeconds(1), Duration.ZERO, "")).getLease();
        stub.release(ReleaseRequest.newBuilder().setResource(lease.getResource()).setToken(lease.getToken()).build());
      }
    });
  }

  private static String lockKey(String resource) {
    return "redlock:{" + resource + "}:lock";
  }

  private static String electionKey(String election) {
    return "redlock:election:{" + election + "}:lock";
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
