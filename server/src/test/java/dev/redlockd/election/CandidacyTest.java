package dev.redlockd.election;

import static org.assertj.core.api.Assertions.assertThat;

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
}
