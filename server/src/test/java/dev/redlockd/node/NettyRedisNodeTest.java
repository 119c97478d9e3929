package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The pipelined node client against a real redis-server. */
class NettyRedisNodeTest {
  private static final LuaScript RELEASE = LuaScript.of("compare-and-delete",
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return {redis.call('DEL', KEYS[1]), 0} end return {0, 0}");
  private static final Duration TIMEOUT = Duration.ofMillis(250);
  private static RedisCluster cluster;
  private static NettyRedisNode node;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(1);
    // Roomy enough for a cold JVM's first connection; the frozen-node test scales with it.
    node = new NettyRedisNode(NodeAddress.parse(cluster.uris().get(0)), TIMEOUT);
    // A cold JVM's first connection (Netty's classes, the loops' first pass) can take longer
    // than the timeout; these tests are about the warm path.
    for (int i = 0; i < 20 && node.command("PING").handle((reply, failure) -> failure).join() != null; i++) {
      // try again: the connection is up now, or coming up
    }
  }

  @AfterAll
  static void stop() {
    node.close();
    cluster.close();
  }

  private static CompletableFuture<Object> release(String key, String token) {
    return node.eval(RELEASE, List.of(key), List.of(token));
  }

  @Test
  void scriptUnknownToTheNodeFallsBackToEval() throws Exception {
    cluster.call(0, "SCRIPT", "FLUSH");
    cluster.call(0, "SET", "k1", "tok");
    assertThat(release("k1", "tok").get(1, TimeUnit.SECONDS)).isEqualTo(List.of(1L, 0L));
    // EVAL cached it again: the next call goes by EVALSHA.
    assertThat(cluster.call(0, "SCRIPT", "EXISTS", RELEASE.sha1())).isEqualTo(List.of(1L));
  }

  /**
   * A script the node has not cached, first sent while the node is frozen: the call times out,
   * and the script must still run when the node thaws (a failed round's clean-up sent to a node
   * that answers late relies on it). By EVALSHA it would answer NOSCRIPT after the deadline and
   * run nothing; a connection's first call of a script goes whole, as EVAL.
   */
  @Test
  void aScriptNotYetCachedRunsOnAFrozenNodeOnceItThawsThoughItsCallTimedOut() throws Exception {
    LuaScript set = LuaScript.of("set-once-thawed", "return redis.call('SET', KEYS[1], ARGV[1])");
    cluster.call(0, "SCRIPT", "FLUSH");
    NettyRedisNode fresh = new NettyRedisNode(NodeAddress.parse(cluster.uris().get(0)), TIMEOUT);
    try {
      assertThat(fresh.command("PING").get(5, TimeUnit.SECONDS)).isEqualTo("PONG"); // connected, nothing sent
      cluster.pause(0);
      CompletableFuture<Object> late;
      try {
        late = fresh.eval(set, List.of("ran-after-thaw"), List.of("yes"));
        assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(TimeoutException.class);
      } finally {
        cluster.resume(0);
      }
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (cluster.call(0, "GET", "ran-after-thaw") == null && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      assertThat(cluster.call(0, "GET", "ran-after-thaw")).isEqualTo("yes");
      // Cached now, on this connection's first call: the next goes by EVALSHA.
      assertThat(cluster.call(0, "SCRIPT", "EXISTS", set.sha1())).isEqualTo(List.of(1L));
    } finally {
      fresh.close();
    }
  }

  @Test
  void manyConcurrentCallsAllGetTheirOwnReply() throws Exception {
    List<CompletableFuture<Object>> calls = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      cluster.call(0, "SET", "many-" + i, "t" + (i % 2));
    }
    // Cached already (another test flushes scripts): this test is about matching replies, not
    // about 2000 NOSCRIPT fallbacks fitting in the timeout on a busy machine.
    cluster.call(0, "SCRIPT", "LOAD", RELEASE.source());
    for (int i = 0; i < 2000; i++) {
      calls.add(release("many-" + i, "t0"));
    }
    for (int i = 0; i < 2000; i++) {
      long deleted = (Long) ((List<?>) calls.get(i).get(2, TimeUnit.SECONDS)).get(0);
      assertThat(deleted).as("call %d", i).isEqualTo(i % 2 == 0 ? 1L : 0L);
    }
  }

  @Test
  void frozenNodeFailsCallsWithinTheTimeoutAndLateRepliesFindTheirOwnCalls() throws Exception {
    cluster.pause(0);
    long start = System.nanoTime();
    CompletableFuture<Object> late;
    try {
      late = node.command("ECHO", "sent while frozen");
      assertThatThrownBy(() -> late.get(2, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(TimeoutException.class);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
          .isBetween(TIMEOUT.toMillis() - 10, TIMEOUT.toMillis() + 500);
      // A call made while the connection waits out its stuck bound gets its own timeout.
      long second = System.nanoTime();
      assertThatThrownBy(() -> node.command("ECHO", "also frozen").get(2, TimeUnit.SECONDS))
          .hasCauseInstanceOf(TimeoutException.class);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - second))
          .isBetween(TIMEOUT.toMillis() - 10, TIMEOUT.toMillis() + 200);
    } finally {
      cluster.resume(0);
    }
    // A short freeze keeps the connection: the late reply goes to the call that timed out,
    // not to the next one.
    assertThat(node.command("ECHO", "sent after").get(1, TimeUnit.SECONDS)).isEqualTo("sent after");
  }

  @Test
  void nodeFrozenPastTheStuckBoundGetsAFreshConnection() throws Exception {
    // This thread's calls always take the same connection, which Redis numbers.
    Object idBefore = node.command("CLIENT", "ID").get(1, TimeUnit.SECONDS);
    cluster.pause(0);
    try {
      CompletableFuture<Object> stuck = node.command("ECHO", "stuck");
      Thread.sleep(TimeUnit.NANOSECONDS.toMillis(DeadlineTimer.STUCK_NANOS) + TIMEOUT.toMillis() + 300);
      assertThat(stuck).isCompletedExceptionally();
    } finally {
      cluster.resume(0);
    }
    Object reply = null;
    for (int i = 0; i < 20 && reply == null; i++) {
      try {
        reply = node.command("CLIENT", "ID").get(1, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        Thread.sleep(20);
      }
    }
    assertThat(reply).isInstanceOf(Long.class).isNotEqualTo(idBefore);
  }

  @Test
  void plainCommandsDecodeBulkReplies() throws Exception {
    Object reply = node.command("CONFIG", "GET", "maxmemory-policy").get(1, TimeUnit.SECONDS);
    assertThat(reply).isEqualTo(List.of("maxmemory-policy", "noeviction"));
  }

  @Test
  void callsMadeTogetherAreHeldUntilTheBlockEndsThenSentAsFewPipelines() throws Exception {
    int calls = 1000;
    long readsBefore = readsProcessed();
    List<CompletableFuture<Object>> sets = new ArrayList<>();
    Pipelining.together(() -> {
      for (int i = 0; i < calls; i++) {
        sets.add(node.command("SET", "together-" + i, "v"));
      }
      // Still held on this thread: nothing reached the node yet.
      assertThat(cluster.call(0, "EXISTS", "together-0")).isEqualTo(0L);
    });
    for (CompletableFuture<Object> set : sets) {
      assertThat(set.get(2, TimeUnit.SECONDS)).isEqualTo("OK");
    }
    // 1000 calls in batches of at most 256 over two connections: a handful of reads, not 1000.
    // The INFO call itself and the EXISTS above count too.
    assertThat(readsProcessed() - readsBefore).isLessThanOrEqualTo(20);
  }

  private static long readsProcessed() {
    String stats = (String) cluster.call(0, "INFO", "stats");
    return stats.lines()
        .filter(line -> line.startsWith("total_reads_processed:"))
        .mapToLong(line -> Long.parseLong(line.substring(line.indexOf(':') + 1).trim()))
        .findFirst()
        .orElseThrow();
  }
}
