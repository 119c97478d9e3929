package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.LuaScript;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An Acquire abandoned by its caller (deadline, cancel) while one of its rounds is under way,
 * against real Redis nodes whose answers to the acquire script arrive late (the script has
 * already run on the node).
 */
class AbandonedAcquireTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration LATE = Duration.ofMillis(300);

  /** A real node whose acquire answers are held back while {@code late} is set. */
  private static final class LateAnswers implements RedisNode {
    private final RedisNode real;
    volatile boolean late;

    LateAnswers(RedisNode real) {
      this.real = real;
    }

    @Override
    public String name() {
      return real.name();
    }

    @Override
    public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
      CompletableFuture<Object> reply = real.eval(script, keys, args);
      if (!late || !script.name().equals("acquire")) {
        return reply;
      }
      return reply.thenCompose(r -> CompletableFuture.supplyAsync(() -> r,
          CompletableFuture.delayedExecutor(LATE.toMillis(), TimeUnit.MILLISECONDS)));
    }

    @Override
    public CompletableFuture<Object> command(String... args) {
      return real.command(args);
    }

    @Override
    public void close() {
      real.close();
    }
  }

  private interface Body {
    void run(LockEngine engine, List<LateAnswers> nodes) throws Exception;
  }

  private static void withEngine(Body body) throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      List<LateAnswers> nodes = cluster.uris().stream()
          .map(uri -> new LateAnswers(new NettyRedisNode(NodeAddress.parse(uri), Duration.ofSeconds(2))))
          .toList();
      try (LockEngine engine = LockEngine.builder(List.copyOf(nodes), EngineHarness.testConfig()).build().start()) {
        body.run(engine, nodes);
      } finally {
        nodes.forEach(LateAnswers::close);
      }
    }
  }

  @Test
  void abandonedRoundDoesNotReleaseTheCallersRetryWithTheSameToken() throws Exception {
    withEngine((engine, nodes) -> {
      String token = LockToken.generate(new java.security.SecureRandom());
      nodes.forEach(n -> n.late = true);
      CompletableFuture<Lease> first = engine.acquire("retried", TTL, Duration.ZERO, token);
      Thread.sleep(LATE.toMillis() / 3); // the script has run on the nodes; the answers are on their way
      first.cancel(false); // the caller's deadline passed
      nodes.forEach(n -> n.late = false);

      Lease retry = engine.acquire("retried", TTL, Duration.ZERO, token).join();
      Thread.sleep(LATE.toMillis() * 2); // the abandoned round has finished by now

      assertThatThrownBy(() -> engine.acquire("retried", TTL, Duration.ZERO, "").join())
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(LockHeldException.class);
      assertThat(engine.release("retried", retry.token()).join()).isTrue();
    });
  }

  @Test
  void abandonedRoundReleasesALeaseWhoseTokenTheEngineMade() throws Exception {
    withEngine((engine, nodes) -> {
      nodes.forEach(n -> n.late = true);
      CompletableFuture<Lease> first = engine.acquire("abandoned", TTL, Duration.ZERO, "");
      Thread.sleep(LATE.toMillis() / 3);
      first.cancel(false);
      nodes.forEach(n -> n.late = false);
      Thread.sleep(LATE.toMillis() * 2);

      // No one knows that token: had it not been released, the lock would stay taken for the ttl.
      Lease next = engine.acquire("abandoned", TTL, Duration.ZERO, "").join();
      assertThat(engine.release("abandoned", next.token()).join()).isTrue();
    });
  }
}
