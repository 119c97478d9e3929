package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A unary Extend of a lease this server keeps alive: the keeper takes the new ttl, so a shorter
 * one is renewed in time and a JEOPARDY report never claims more than the nodes hold.
 */
class KeptLeaseExtendTest {
  private static RedisCluster cluster;
  private static List<RedisNode> nodes;
  private static LockEngine engine;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(3);
    nodes = cluster.uris().stream()
        .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), Duration.ofMillis(50))).toList();
    engine = LockEngine.builder(nodes, EngineConfig.defaults().withProbeInterval(Duration.ofMillis(100))).build().start();
  }

  @AfterAll
  static void stop() {
    engine.close();
    nodes.forEach(RedisNode::close);
    cluster.close();
  }

  /** What the keeper reported: validity in ms, or -1 for a loss. */
  private record Report(String kind, long validityMs) {}

  private static final class Reports implements KeptLease.Listener {
    final LinkedBlockingQueue<Report> queue = new LinkedBlockingQueue<>();

    @Override
    public void held(Grant lease, long mark) {
      queue.add(new Report("held", lease.validity().toMillis()));
    }

    @Override
    public void jeopardy(Grant lease, LockEngineException cause, long mark) {
      queue.add(new Report("jeopardy", lease.validity().toMillis()));
    }

    @Override
    public void lost(LockEngineException cause) {
      queue.add(new Report("lost", -1));
    }

    Report next(long timeoutMs) throws InterruptedException {
      return queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
    }
  }

  @Test
  void anExtendThatShortensAKeptLeaseIsRenewedByTheShorterTtlAndJeopardyReportsWhatTheNodesHold() throws Exception {
    Duration longTtl = Duration.ofSeconds(9);
    Grant grant = engine.acquire("kept-extend", longTtl, Duration.ZERO, "").get(5, TimeUnit.SECONDS);
    Reports reports = new Reports();
    KeptLease kept = engine.keep("kept-extend", grant.token(), longTtl, reports);
    kept.renewNow(null, 1);
    assertThat(reports.next(2_000)).extracting(Report::kind).isEqualTo("held");

    engine.extend("kept-extend", grant.token(), Duration.ofMillis(900)).get(5, TimeUnit.SECONDS);
    // The keeper renews by the new ttl (every 300 ms), not by the old one's 3 s period, which
    // would find the key gone.
    Report renewed = reports.next(1_500);
    assertThat(renewed).as("a renewal within the shorter ttl").isNotNull();
    assertThat(renewed.kind()).isEqualTo("held");
    assertThat(renewed.validityMs()).isLessThanOrEqualTo(900);

    cluster.pause(0, 1); // no quorum: the next renewal is in jeopardy
    try {
      Report jeopardy = reports.next(2_000);
      while (jeopardy != null && jeopardy.kind().equals("held")) {
        jeopardy = reports.next(2_000);
      }
      assertThat(jeopardy).isNotNull();
      assertThat(jeopardy.kind()).isEqualTo("jeopardy");
      assertThat(jeopardy.validityMs()).as("what the 900 ms ttl leaves, not the 9 s one").isLessThan(900);
    } finally {
      cluster.resume(0, 1);
      kept.stop();
    }
  }
}
