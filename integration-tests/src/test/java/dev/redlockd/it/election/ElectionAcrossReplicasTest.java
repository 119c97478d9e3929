package dev.redlockd.it.election;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaderRequest;
import dev.redlockd.proto.v1.LeaderResponse;
import dev.redlockd.proto.v1.Leadership;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Replicas;
import dev.redlockd.testing.ServerProcess;
import dev.redlockd.testing.UntilAvailable;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Leader election and cross-replica wake-ups end to end: two server processes on the same 5
 * real Redis nodes, candidates and observers on both.
 */
class ElectionAcrossReplicasTest {
  private static final Duration TTL = Duration.ofSeconds(2);
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static Replicas replicas;
  private static RedisCluster cluster;
  private static ServerProcess a;
  private static ServerProcess b;

  @BeforeAll
  static void start() {
    replicas = Replicas.start(5, 2);
    cluster = replicas.cluster();
    a = replicas.server(0);
    b = replicas.server(1);
  }

  @AfterAll
  static void stop() throws Exception {
    replicas.close();
  }

  /** A failure here is about what two processes did: their logs go into the report with it. */
  @RegisterExtension
  final TestWatcher serverLogsOnFailure = new TestWatcher() {
    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
      System.out.println(replicas.logs());
    }
  };

  private static ServerProcess replica(int i) {
    return i % 2 == 0 ? a : b;
  }

  /**
   * Twelve candidates, six on each replica, each leading once for a moment then resigning:
   * never two that count themselves leader at once, and terms rise in the order they led.
   */
  @Test
  void manyCandidatesOnBothReplicasNeverLeadTogetherAndTermsRise() throws Exception {
    List<Candidate> candidates = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      candidates.add(new Candidate(replica(i).channel(), "c" + i, "many", "c" + i, TTL));
    }
    try {
      List<Candidate> led = new ArrayList<>();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (led.size() < candidates.size() && System.nanoTime() < deadline) {
        Candidate leader = null;
        for (Candidate c : candidates) {
          if (!led.contains(c) && c.leading.isDone()) {
            assertThat(leader).as("two candidates answered as leader at once: %s and %s", leader, c).isNull();
            leader = c;
          }
        }
        if (leader == null) {
          Thread.sleep(1);
          continue;
        }
        led.add(leader);
        Thread.sleep(20); // its critical section
        leader.resign();
        assertThat(leader.ended.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
      }
      assertThat(led).as("every candidate led once").hasSize(candidates.size());
      led.sort(Comparator.comparingLong(Candidate::leadingSince));
      for (int i = 1; i < led.size(); i++) {
        Candidate before = led.get(i - 1);
        Candidate after = led.get(i);
        assertThat(after.term()).as("term of %s after %s", after, before).isGreaterThan(before.term());
        assertThat(before.leadingUntil()).as("%s stopped counting itself leader before %s began", before, after)
            .isLessThanOrEqualTo(after.leadingSince());
      }
    } finally {
      candidates.forEach(Candidate::close);
    }
  }

  /**
   * A half-close hands the leadership to a candidate on the other replica at once: counted from
   * the half-close to the next leader's first answer, so it includes the release. Its own two
   * replicas retry a waiting candidate only every 1 to 2 s (--retry-delay 2s), so that only the
   * release's notice can make a hand-over quick: a p50 under 250 ms shows the notice on a machine
   * of any speed. With the default 100 ms the bound had to be 20 ms, and a slower machine of the
   * CI kind took a p50 of 30.6 ms with the notice working (5-11 ms on a quiet faster one).
   */
  @Test
  void aResignationHandsOverToACandidateOnTheOtherReplicaAtOnce() throws Exception {
    try (Replicas slowRetries = Replicas.start(5, 2, "--retry-delay", "2s")) {
      handOvers(slowRetries.server(0), slowRetries.server(1));
    }
  }

  private static void handOvers(ServerProcess first, ServerProcess second) throws Exception {
    List<Long> handOverMicros = new ArrayList<>();
    Candidate leader = new Candidate(first.channel(), "first", "handover", "first", TTL);
    leader.leading.get(10, TimeUnit.SECONDS);
    // The first 20 warm the server processes' code paths up (JIT); the last 20 are counted.
    for (int i = 1; i <= 40; i++) {
      Candidate next = new Candidate((i % 2 == 0 ? first : second).channel(), "n" + i, "handover", "n" + i, TTL);
      Thread.sleep(20);
      assertThat(next.leading).as("a candidate while another leads").isNotDone();
      long resigned = System.nanoTime();
      leader.resign();
      CampaignResponse took = next.leading.get(10, TimeUnit.SECONDS);
      if (i > 20) {
        handOverMicros.add(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - resigned));
      }
      assertThat(took.getTerm()).isGreaterThan(leader.term());
      leader = next;
    }
    leader.resign();
    handOverMicros.sort(null);
    long p50 = handOverMicros.get(handOverMicros.size() / 2);
    System.out.println("election hand-over across replicas: p50 " + p50 + " us, max "
        + handOverMicros.get(handOverMicros.size() - 1) + " us over " + handOverMicros.size());
    assertThat(p50).as("hand-over p50, us (a retry would take 1,000,000 to 2,000,000)").isLessThan(250_000);
  }

  /** A leader that vanishes without resigning is replaced once its lease runs out, not before. */
  @Test
  void aLeaderThatVanishesIsReplacedWithinTheTtl() throws Exception {
    Candidate gone = new Candidate(a.channel(), "gone", "vanish", "gone", TTL);
    gone.leading.get(10, TimeUnit.SECONDS);
    Candidate next = new Candidate(b.channel(), "next", "vanish", "next", TTL);
    Thread.sleep(100);
    long vanished = System.nanoTime();
    gone.vanish();
    CampaignResponse took = next.leading.get(10, TimeUnit.SECONDS);
    long afterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - vanished);
    assertThat(took.getTerm()).isGreaterThan(gone.term());
    assertThat(afterMs).as("elected after the leader vanished, ms").isLessThan(TTL.toMillis() + 1_000);
    assertThat(next.leadingSince()).as("not before the vanished leader's validity ran out")
        .isGreaterThanOrEqualTo(gone.leadingUntil());
    next.resign();
  }

  /** The replica that served the leader's stream dies (SIGKILL): a candidate on the other one leads within the ttl. */
  @Test
  void aLeaderWhoseReplicaIsKilledIsReplacedWithinTheTtl() throws Exception {
    try (ServerProcess doomed = ServerProcess.start("--redis", cluster.redisFlag())) {
      Candidate leader = new Candidate(doomed.channel(), "doomed", "killed-replica", "doomed", TTL);
      leader.leading.get(10, TimeUnit.SECONDS);
      Candidate next = new Candidate(b.channel(), "survivor", "killed-replica", "survivor", TTL);
      Thread.sleep(100);
      long killed = System.nanoTime();
      doomed.kill();
      CampaignResponse took = next.leading.get(10, TimeUnit.SECONDS);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed)).isLessThan(TTL.toMillis() + 1_000);
      assertThat(took.getTerm()).isGreaterThan(leader.term());
      next.resign();
    }
  }

  /**
   * Observers on both replicas see every change, in term order, none skipped and none repeated;
   * Leader agrees with them; then, while a majority of the nodes is stopped, they say no leader.
   */
  @Test
  void observersOnBothReplicasSeeEveryChangeThenNoLeaderWithoutAMajority() throws Exception {
    Duration within = Duration.ofSeconds(5);
    try (Observer onA = new Observer(a.channel(), "observed"); Observer onB = new Observer(b.channel(), "observed")) {
      assertThat(onA.awaitVacant(within)).isTrue();
      assertThat(onB.awaitVacant(within)).isTrue();
      List<Optional<Leadership>> expected = new ArrayList<>(List.of(Optional.empty()));
      for (int i = 0; i < 4; i++) {
        Candidate c = new Candidate(replica(i).channel(), "v" + i, "observed", "v" + i, TTL);
        long term = c.leading.get(10, TimeUnit.SECONDS).getTerm();
        expected.add(Optional.of(leadership("v" + i, term)));
        assertThat(onA.awaitLeader(term, within)).isTrue();
        assertThat(onB.awaitLeader(term, within)).isTrue();
        for (ServerProcess replica : List.of(a, b)) {
          LeaderResponse leader = ElectionServiceGrpc.newBlockingStub(replica.channel())
              .leader(LeaderRequest.newBuilder().setElection("observed").build());
          assertThat(leader.getLeader()).isEqualTo(leadership("v" + i, term));
        }
        c.proclaim("v" + i + "'");
        expected.add(Optional.of(leadership("v" + i + "'", term)));
        assertThat(onA.awaitLatest(s -> s.equals(expected.get(expected.size() - 1)), within)).isTrue();
        assertThat(onB.awaitLatest(s -> s.equals(expected.get(expected.size() - 1)), within)).isTrue();
        c.resign();
        expected.add(Optional.empty());
        assertThat(onA.awaitVacant(within)).isTrue();
        assertThat(onB.awaitVacant(within)).isTrue();
      }
      assertThat(onA.states()).isEqualTo(expected);
      assertThat(onB.states()).isEqualTo(expected);

      Candidate stranded = new Candidate(a.channel(), "stranded", "observed", "stranded", TTL);
      long term = stranded.leading.get(10, TimeUnit.SECONDS).getTerm();
      assertThat(onB.awaitLeader(term, within)).isTrue();
      cluster.pause(0, 1, 2);
      try {
        assertThat(onA.awaitVacant(within)).as("no leader on A while 3 of 5 nodes are stopped").isTrue();
        assertThat(onB.awaitVacant(within)).as("no leader on B while 3 of 5 nodes are stopped").isTrue();
        assertThat(stranded.ended.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      } finally {
        cluster.resumeAll();
      }
    }
  }

  /**
   * The lock's own hand-off: a waiter on replica B gets a lock released through replica A within
   * 10 ms at p50, counted from A's answer to the Release to B's answer to the waiting Acquire.
   */
  @Test
  void aWaiterOnOneReplicaGetsALockReleasedThroughTheOtherWithinMilliseconds() throws Exception {
    LockServiceGrpc.LockServiceBlockingStub viaA = LockServiceGrpc.newBlockingStub(a.channel());
    LockServiceGrpc.LockServiceBlockingStub viaB = LockServiceGrpc.newBlockingStub(b.channel());
    List<Long> handOffMicros = new ArrayList<>();
    // The first 30 warm the server processes' code paths up (JIT); the last 30 are counted.
    // Calls are retried on UNAVAILABLE, as every client retries them: a fresh-clone run, the
    // machine's 2 cores full, had a Release hear from 2 of 5 nodes within the node timeout. The
    // claim is the hand-off's time, not every call's first fate.
    for (int i = 0; i < 60; i++) {
      Lease held = UntilAvailable.call(() -> viaA.acquire(acquireRequest("cross-wake", TTL, Duration.ZERO, "")))
          .getLease();
      CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
          () -> UntilAvailable.call(() -> viaB.acquire(acquireRequest("cross-wake", TTL, WAIT, ""))).getLease());
      Thread.sleep(20);
      assertThat(waiter).isNotDone();
      ReleaseRequest first = ReleaseRequest.newBuilder().setResource("cross-wake").setToken(held.getToken()).build();
      UntilAvailable.call(() -> viaA.release(first));
      long released = System.nanoTime();
      Lease next = waiter.get(10, TimeUnit.SECONDS);
      if (i >= 30) {
        handOffMicros.add(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - released));
      }
      ReleaseRequest second = ReleaseRequest.newBuilder().setResource("cross-wake").setToken(next.getToken()).build();
      UntilAvailable.call(() -> viaB.release(second));
    }
    handOffMicros.sort(null);
    long p50 = handOffMicros.get(handOffMicros.size() / 2);
    System.out.println("lock hand-off across replicas (release answered -> grant answered): p50 " + p50
        + " us, max " + handOffMicros.get(handOffMicros.size() - 1) + " us over " + handOffMicros.size());
    assertThat(p50).as("hand-off p50 across replicas, us").isLessThan(10_000);
  }

  private static Leadership leadership(String value, long term) {
    return Leadership.newBuilder().setValue(value).setTerm(term).build();
  }
}
