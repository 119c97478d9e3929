package dev.redlockd.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.engine.EngineConfig;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.LockEngineException;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Candidacies on two engines over the same real nodes. */
class CandidacyTest {
  private static final Duration TTL = Duration.ofSeconds(2);
  private static RedisCluster cluster;
  private static List<RedisNode> nodes;
  private static LockEngine one;
  private static LockEngine two;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(5);
    nodes = cluster.uris().stream()
        .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), Duration.ofMillis(Long.getLong("candidacy.nodeTimeoutMs", 50)))).toList();
    EngineConfig config = EngineConfig.defaults().withProbeInterval(Duration.ofMillis(100));
    one = LockEngine.builder(nodes, config).build().start();
    two = LockEngine.builder(nodes, config).build().start();
  }

  @AfterAll
  static void stop() {
    one.close();
    two.close();
    nodes.forEach(RedisNode::close);
    cluster.close();
  }

  /** What a candidacy told its caller. */
  static final class Heard implements Candidacy.Listener {
    final CompletableFuture<Candidacy.Leadership> leading = new CompletableFuture<>();
    final CompletableFuture<LockEngineException> lost = new CompletableFuture<>();

    @Override
    public void leading(Candidacy.Leadership leadership, long mark) {
      leading.complete(leadership);
    }

    @Override
    public void jeopardy(Candidacy.Leadership leadership, LockEngineException cause, long mark) {}

    @Override
    public void lost(LockEngineException cause) {
      lost.complete(cause);
    }
  }

  @Test
  void resignationsHandOverBetweenEnginesAndNoLeaderIsLost() throws Exception {
    Elections[] sides = {new Elections(one), new Elections(two)};
    Heard heard = new Heard();
    Candidacy leader = sides[0].campaign("hand", "first", TTL, 0, heard);
    heard.leading.get(5, TimeUnit.SECONDS);
    Heard leaderHeard = heard;
    for (int i = 1; i <= Integer.getInteger("candidacy.rounds", 30); i++) {
      Heard nextHeard = new Heard();
      Candidacy next = sides[i % 2].campaign("hand", "n" + i, TTL, 0, nextHeard);
      Thread.sleep(20);
      assertThat(nextHeard.leading).as("candidate %d while another leads", i).isNotDone();
      leader.resign().get(5, TimeUnit.SECONDS);
      Candidacy.Leadership took = nextHeard.leading.get(5, TimeUnit.SECONDS);
      assertThat(took.term()).isGreaterThan(leaderHeard.leading.join().term());
      Thread.sleep(5);
      assertThat(nextHeard.lost).as("lost right after leading, round %d", i).isNotDone();
      leader = next;
      leaderHeard = nextHeard;
    }
    leader.resign().get(5, TimeUnit.SECONDS);
  }

  private static final String TOKEN_A = "resume-token-aaaaaaaaaaaaaaaaaaaaaaaa";
  private static final String TOKEN_B = "resume-token-bbbbbbbbbbbbbbbbbbbbbbbb";

  @Test
  void aLeaderWhoseServerWentAwayResumesOnAnotherWithTheSameTermAndItsValue() throws Exception {
    Elections first = new Elections(one);
    Elections second = new Elections(two);
    Heard heard = new Heard();
    Candidacy leader = first.campaign("resumed", "v1", TTL, TOKEN_A, false, 0, heard);
    long term = heard.leading.get(5, TimeUnit.SECONDS).term();
    Heard waiting = new Heard();
    Candidacy rival = second.campaign("resumed", "rival", TTL, "", false, 0, waiting);
    leader.abandon(); // as its server does on shutdown: nothing resigned

    Heard back = new Heard();
    Candidacy resumed = second.campaign("resumed", "v2", TTL, TOKEN_A, true, 0, back);
    assertThat(back.leading.get(5, TimeUnit.SECONDS).term()).isEqualTo(term);
    // The resumed leader proclaims its value: readers see it under the same term.
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    Leader read = null;
    while (System.nanoTime() < until) {
      read = second.leader("resumed").get(5, TimeUnit.SECONDS).orElse(null);
      if (read != null && read.value().equals("v2")) {
        break;
      }
      Thread.sleep(20);
    }
    assertThat(read).isEqualTo(new Leader("v2", term));
    // Past the first leadership's ttl: renewed through the second engine, never handed over.
    Thread.sleep(TTL.toMillis() + 500);
    assertThat(waiting.leading).isNotDone();
    assertThat(back.lost).isNotDone();
    resumed.resign().get(5, TimeUnit.SECONDS);
    assertThat(waiting.leading.get(5, TimeUnit.SECONDS).term()).isGreaterThan(term);
    rival.resign().get(5, TimeUnit.SECONDS);
  }

  @Test
  void resumingALeadershipThatIsGoneIsLostAtOnceNotAPlaceInTheQueue() throws Exception {
    Elections first = new Elections(one);
    Elections second = new Elections(two);
    Heard heard = new Heard();
    Candidacy leader = first.campaign("gone", "v", TTL, TOKEN_B, false, 0, heard);
    heard.leading.get(5, TimeUnit.SECONDS);
    leader.resign().get(5, TimeUnit.SECONDS);
    Heard other = new Heard();
    Candidacy next = first.campaign("gone", "next", TTL, "", false, 0, other);
    other.leading.get(5, TimeUnit.SECONDS);

    Heard back = new Heard();
    second.campaign("gone", "v", TTL, TOKEN_B, true, 0, back);
    assertThat(back.lost.get(5, TimeUnit.SECONDS)).isInstanceOf(dev.redlockd.engine.LeaseNotHeldException.class);
    assertThat(back.leading).isNotDone();
    assertThat(other.lost).as("the failed resume announced no vacancy and took nothing").isNotDone();
    assertThat(second.leader("gone").get(5, TimeUnit.SECONDS)).contains(new Leader("next", other.leading.join().term()));
    next.resign().get(5, TimeUnit.SECONDS);
  }

  @Test
  void aCampaignRetriedWithItsTokenIsTheSameCandidacy() throws Exception {
    Elections first = new Elections(one);
    Elections second = new Elections(two);
    String token = "retried-token-cccccccccccccccccccccccc";
    Heard heard = new Heard();
    Candidacy leader = first.campaign("retried", "v", TTL, token, false, 0, heard);
    long term = heard.leading.get(5, TimeUnit.SECONDS).term();
    leader.abandon(); // its answer lost, say: the caller campaigns again with the same token
    Heard again = new Heard();
    Candidacy retried = second.campaign("retried", "v", TTL, token, false, 0, again);
    assertThat(again.leading.get(2, TimeUnit.SECONDS).term()).as("not queued behind itself").isEqualTo(term);
    retried.resign().get(5, TimeUnit.SECONDS);
  }

  /**
   * Two of five nodes frozen (SIGSTOP), and a third holds a rival's passing write where the
   * leader's key had gone (it expired there while that node was frozen earlier, say, and a
   * waiting candidate's round wrote before its clean-up): a proclaim now hears 2 yes, 1 no and
   * 2 silent. The frozen nodes may hold the leader's lease (they do), so nothing was taken over:
   * the proclaim is tried again, and goes through once they answer, under the same term.
   */
  @Test
  void aProclaimThatReachesNoQuorumWhileTwoOfFiveNodesAreFrozenKeepsTheLeadership() throws Exception {
    String election = "frozen-proclaim";
    String key = "redlock:election:{" + election + "}:lock";
    String token = "frozen-token-dddddddddddddddddddddddd";
    Elections elections = new Elections(one);
    Reports heard = new Reports();
    Candidacy leader = elections.campaign(election, "v1", TTL, token, false, 1, heard);
    await().atMost(Duration.ofSeconds(5)).until(() -> heard.last() != null);
    long term = heard.last().leadership().term();
    await().atMost(Duration.ofSeconds(5)).until(() -> IntStream.range(0, cluster.size())
        .allMatch(i -> token.equals(cluster.lockHolder(i, key))));
    cluster.call(2, "SET", key, "rival-token-eeeeeeeeeeeeeeeeeeeeeeeee 1 rival.1\nrival", "PX", "60000");
    int roundsBefore = roundsOnNode0(key);
    cluster.pause(3, 4);
    try {
      leader.update("v2", null, 2);
      // Each proclaim round adds its id on node 0, which takes it: a third id means the first
      // round has been decided (all five answered or timed out) and another has begun.
      await().atMost(Duration.ofSeconds(5))
          .until(() -> !heard.lost().isEmpty() || roundsOnNode0(key) >= roundsBefore + 2);
      assertThat(heard.lost()).as("the leadership was not taken over: the frozen nodes hold it").isEmpty();
    } finally {
      cluster.resume(3, 4);
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> "v2".equals(heard.last().leadership().value()));
    assertThat(heard.last().leadership().term()).isEqualTo(term);
    assertThat(heard.lost()).isEmpty();
    assertThat(elections.leader(election).get(5, TimeUnit.SECONDS)).contains(new Leader("v2", term));
    leader.resign().get(5, TimeUnit.SECONDS);
    cluster.call(2, "DEL", key);
  }

  /** The ids of the acquire rounds that wrote the lock on node 0 (see acquire.lua: at most 4 are kept). */
  private static int roundsOnNode0(String key) {
    String value = cluster.get(0, key);
    return value == null ? 0 : value.split("\n", 2)[0].split(" ").length - 2;
  }

  @Test
  void resumeWithoutATokenIsRefused() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> new Elections(one).campaign("no-token", "v", TTL, "", true, 0, new Heard()))
        .isInstanceOf(dev.redlockd.engine.InvalidRequestException.class)
        .hasMessageContaining("resume needs the candidate's token");
  }
}
