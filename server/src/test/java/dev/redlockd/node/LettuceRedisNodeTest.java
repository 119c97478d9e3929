package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.redlockd.engine.EngineConfig;
import dev.redlockd.engine.Grant;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.LockHeldException;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Lettuce node client against real redis-servers: the replies and failures the engine expects. */
class LettuceRedisNodeTest {
  private static final LuaScript RELEASE = LuaScript.of("compare-and-delete",
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return {redis.call('DEL', KEYS[1]), 0} end return {0, 0}");
  private static final Duration TIMEOUT = Duration.ofMillis(250);
  private static final String LOCK_KEY = "redlock:{lettuce-smoke}:lock";
  private static RedisCluster cluster;
  private static LettuceRedisNode node;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(3);
    node = warm(new LettuceRedisNode(NodeAddress.parse(cluster.uris().get(0)), TIMEOUT));
  }

  /** A cold JVM's first connection can take longer than the timeout; these tests are about the warm path. */
  private static LettuceRedisNode warm(LettuceRedisNode fresh) {
    for (int i = 0; i < 20 && fresh.command("PING").handle((reply, failure) -> failure).join() != null; i++) {
      // try again: the connection is up now, or coming up
    }
    return fresh;
  }

  @AfterAll
  static void stop() {
    node.close();
    cluster.close();
  }

  private static Object eval(String source, String... keys) throws Exception {
    return node.eval(LuaScript.of("t", source), Arrays.asList(keys), List.of()).get(1, TimeUnit.SECONDS);
  }

  @Test
  void scriptRepliesComeAsTheEngineReadsThem() throws Exception {
    assertThat(eval("return 42")).isEqualTo(42L);
    assertThat(eval("return nil")).isNull();
    assertThat(eval("return false")).isNull();
    assertThat(eval("return 'bulk'")).isEqualTo("bulk");
    assertThat(eval("return redis.status_reply('FINE')")).isEqualTo("FINE");
    assertThat(eval("return {1, 'two', {3, 'four'}, {}}"))
        .isEqualTo(List.of(1L, "two", List.of(3L, "four"), List.of()));
    cluster.call(0, "SET", "typed", "v");
    assertThat(eval("return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}", "typed"))
        .isEqualTo(List.of("v", -1L));
  }

  @Test
  void plainCommandsComeAsTheEngineReadsThem() throws Exception {
    assertThat(node.command("PING").get(1, TimeUnit.SECONDS)).isEqualTo("PONG");
    assertThat(node.command("CONFIG", "GET", "maxmemory-policy").get(1, TimeUnit.SECONDS))
        .isEqualTo(List.of("maxmemory-policy", "noeviction"));
    assertThat(node.command("GET", "never-set").get(1, TimeUnit.SECONDS)).isNull();
    assertThat(node.command("CLIENT", "GETNAME").get(1, TimeUnit.SECONDS)).isEqualTo("redlockd");
  }

  @Test
  void scriptUnknownToTheNodeFallsBackToEval() throws Exception {
    cluster.call(0, "SCRIPT", "FLUSH");
    cluster.call(0, "SET", "k1", "tok");
    assertThat(node.eval(RELEASE, List.of("k1"), List.of("tok")).get(1, TimeUnit.SECONDS)).isEqualTo(List.of(1L, 0L));
    // EVAL cached it again: the next call goes by EVALSHA.
    assertThat(cluster.call(0, "SCRIPT", "EXISTS", RELEASE.sha1())).isEqualTo(List.of(1L));
  }

  @Test
  void errorRepliesAreRedisErrorReplies() {
    assertThatThrownBy(() -> eval("return redis.error_reply('BOOM it failed')"))
        .isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(RedisErrorReply.class).hasMessage("BOOM it failed");
    assertThatThrownBy(() -> node.command("NOSUCHCOMMAND").get(1, TimeUnit.SECONDS))
        .cause().isInstanceOf(RedisErrorReply.class).hasMessageStartingWith("ERR unknown command");
  }

  @Test
  void manyConcurrentCallsAllGetTheirOwnReply() throws Exception {
    cluster.call(0, "SCRIPT", "LOAD", RELEASE.source());
    for (int i = 0; i < 500; i++) {
      cluster.call(0, "SET", "many-" + i, "t" + (i % 2));
    }
    List<CompletableFuture<Object>> calls = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      calls.add(node.eval(RELEASE, List.of("many-" + i), List.of("t0")));
    }
    for (int i = 0; i < 500; i++) {
      assertThat(((List<?>) calls.get(i).get(2, TimeUnit.SECONDS)).get(0)).as("call %d", i).isEqualTo(i % 2 == 0 ? 1L : 0L);
    }
  }

  @Test
  void frozenNodeTimesOutWithinTheNodeTimeout() throws Exception {
    cluster.pause(0);
    long start = System.nanoTime();
    try {
      assertThatThrownBy(() -> node.command("ECHO", "sent while frozen").get(2, TimeUnit.SECONDS))
          .cause().isInstanceOf(TimeoutException.class);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
          .isBetween(TIMEOUT.toMillis() - 10, TIMEOUT.toMillis() + 500);
    } finally {
      cluster.resume(0);
    }
    // The late reply goes to the call that timed out, not to the next one.
    assertThat(node.command("ECHO", "sent after").get(1, TimeUnit.SECONDS)).isEqualTo("sent after");
  }

  @Test
  void nodeThatIsDownFailsFastWithAConnectionFailure() throws Exception {
    try (RedisCluster doomed = RedisCluster.start(1);
        LettuceRedisNode lost = warm(new LettuceRedisNode(NodeAddress.parse(doomed.uris().get(0)), Duration.ofSeconds(5)))) {
      assertThat(lost.command("PING").get(1, TimeUnit.SECONDS)).isEqualTo("PONG");
      doomed.kill(0);
      // A timeout of seconds: a call that only failed when it ran out would show here.
      for (int i = 0; i < 3; i++) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> lost.command("PING").get(3, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class)
            .cause().isInstanceOf(NodeConnectionException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1000);
      }
    }
    // Never connected at all: the port is closed now.
    try (LettuceRedisNode never = new LettuceRedisNode(NodeAddress.parse("redis://127.0.0.1:1"), Duration.ofSeconds(5))) {
      long start = System.nanoTime();
      assertThatThrownBy(() -> never.command("PING").get(3, TimeUnit.SECONDS))
          .cause().isInstanceOf(NodeConnectionException.class);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1000);
    }
  }

  @Test
  void nodeRestartedIsReachedAgain() throws Exception {
    try (RedisCluster bouncing = RedisCluster.start(1);
        LettuceRedisNode back = warm(new LettuceRedisNode(NodeAddress.parse(bouncing.uris().get(0)), TIMEOUT))) {
      bouncing.restart(0);
      // Lettuce reconnects by itself, at most a second apart; calls fail fast meanwhile.
      Object reply = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (reply == null && System.nanoTime() < deadline) {
        reply = back.command("PING").handle((ok, failure) -> ok).get(2, TimeUnit.SECONDS);
        if (reply == null) {
          Thread.sleep(20);
        }
      }
      assertThat(reply).isEqualTo("PONG");
    }
  }

  @Test
  void closedNodeRefusesCalls() {
    LettuceRedisNode closing = warm(new LettuceRedisNode(NodeAddress.parse(cluster.uris().get(1)), TIMEOUT));
    closing.close();
    assertThatThrownBy(() -> closing.command("PING").get(1, TimeUnit.SECONDS))
        .cause().isInstanceOf(IllegalStateException.class);
  }

  @Test
  void engineTakesAndReleasesLocksOverThreeLettuceNodes() {
    List<RedisNode> nodes = cluster.uris().stream()
        .map(uri -> (RedisNode) warm(new LettuceRedisNode(NodeAddress.parse(uri), Duration.ofMillis(100))))
        .toList();
    try (LockEngine engine = LockEngine.builder(nodes, EngineConfig.defaults().withProbeInterval(Duration.ofMillis(100)))
        .build().start()) {
      Duration ttl = Duration.ofSeconds(10);
      long fence = 0;
      for (int i = 0; i < 20; i++) {
        Grant lease = engine.acquire("lettuce-smoke", ttl, Duration.ZERO, "").join();
        assertThat(lease.fencingToken()).isGreaterThan(fence);
        fence = lease.fencingToken();
        // A quorum is enough for the engine to answer; the third node may still be running it.
        assertThat(IntStream.range(0, 3).filter(n -> cluster.lockHolder(n, LOCK_KEY) != null).count())
            .isGreaterThanOrEqualTo(2);
        assertThatThrownBy(() -> engine.acquire("lettuce-smoke", ttl, Duration.ZERO, "").join())
            .hasCauseInstanceOf(LockHeldException.class);
        assertThat(engine.extend("lettuce-smoke", lease.token(), ttl).join().token()).isEqualTo(lease.token());
        assertThat(engine.release("lettuce-smoke", lease.token()).join()).isTrue();
      }
      await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(
          IntStream.range(0, 3).filter(n -> cluster.get(n, LOCK_KEY) != null).count()).isZero());
    } finally {
      nodes.forEach(RedisNode::close);
    }
  }
}
