package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * An Acquire abandoned by its caller (deadline, cancel) while one of its rounds is under way,
 * against real Redis nodes whose answers to the acquire script are held back (the script has
 * already run on the node) until the test lets them through.
 */
class AbandonedAcquireTest {
  private static final Duration TTL = Duration.ofSeconds(10);

  /**
   * A real node whose acquire answers are held while {@code holding} is set, and handed on by
   * {@link #letThrough()} on the test's own thread: every step the engine takes on them (a
   * release included) has been taken when it returns.
   */
  private static final class HeldAnswers implements RedisNode {
    private final RedisNode real;
    volatile boolean holding;
    private final List<CompletableFuture<Object>> ran = new CopyOnWriteArrayList<>();
    private final List<Runnable> held = new CopyOnWriteArrayList<>();
    final List<CompletableFuture<Object>> releases = new CopyOnWriteArrayList<>();

    HeldAnswers(RedisNode real) {
      this.real = real;
    }

    @Override
    public String name() {
      return real.name();
    }

    @Override
    public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
      CompletableFuture<Object> reply = real.eval(script, keys, args);
      if (script.name().equals("release")) {
        releases.add(reply);
      }
      if (!script.name().equals("acquire")) {
        return reply;
      }
      CompletableFuture<Object> late = new CompletableFuture<>();
      synchronized (this) {
        if (!holding) {
          return reply;
        }
        ran.add(reply);
        held.add(() -> reply.whenComplete((r, e) -> {
          if (e == null) {
            late.complete(r);
          } else {
            late.completeExceptionally(e);
          }
        }));
      }
      return late;
    }

    /** Waits until every held acquire has run on the node (its answer is back, but held). */
    void awaitScriptsRan() {
      CompletableFuture.allOf(ran.toArray(CompletableFuture[]::new)).join();
    }

    void letThrough() {
      List<Runnable> answers;
      synchronized (this) {
        holding = false;
        answers = List.copyOf(held);
        held.clear();
      }
      answers.forEach(Runnable::run);
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
    void run(LockEngine engine, List<HeldAnswers> nodes) throws Exception;
  }

  private static void withEngine(Body body) throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      List<HeldAnswers> nodes = cluster.uris().stream()
          .map(uri -> new HeldAnswers(new NettyRedisNode(NodeAddress.parse(uri), Duration.ofSeconds(2))))
          .toList();
      try (LockEngine engine = LockEngine.builder(List.copyOf(nodes), EngineHarness.testConfig()).build().start()) {
        body.run(engine, nodes);
      } finally {
        nodes.forEach(HeldAnswers::close);
      }
    }
  }

  @Test
  void abandonedRoundDoesNotReleaseTheCallersRetryWithTheSameToken() throws Exception {
    withEngine((engine, nodes) -> {
      String token = LockToken.generate(new java.security.SecureRandom());
      nodes.forEach(n -> n.holding = true);
      CompletableFuture<Grant> first = engine.acquire("retried", TTL, Duration.ZERO, token);
      nodes.forEach(HeldAnswers::awaitScriptsRan);
      first.cancel(false); // the caller's deadline passed while the answers were on their way

      // The caller retries with its token while the abandoned round's answers are still out.
      // The retry's answers are held too: letThrough hands on the abandoned round's first, so
      // that round finishes after the retry's script has run on every node.
      CompletableFuture<Grant> retried = engine.acquire("retried", TTL, Duration.ZERO, token);
      nodes.forEach(HeldAnswers::letThrough);
      Grant retry = retried.join();

      assertThat(nodes).allSatisfy(n -> assertThat(n.releases).as("releases sent by the abandoned round").isEmpty());
      assertThatThrownBy(() -> engine.acquire("retried", TTL, Duration.ZERO, "").join())
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(LockHeldException.class);
      assertThat(engine.release("retried", retry.token()).join()).isTrue();
    });
  }

  @Test
  void abandonedRoundReleasesALeaseWhoseTokenTheEngineMade() throws Exception {
    withEngine((engine, nodes) -> {
      nodes.forEach(n -> n.holding = true);
      CompletableFuture<Grant> first = engine.acquire("abandoned", TTL, Duration.ZERO, "");
      nodes.forEach(HeldAnswers::awaitScriptsRan);
      first.cancel(false);
      nodes.forEach(HeldAnswers::letThrough);

      // The round took the lock for a token no one knows: it gave it back on every node.
      for (HeldAnswers node : nodes) {
        assertThat(node.releases).hasSize(1);
        assertThat(node.releases.get(0).join()).isEqualTo(List.of(1L, 1L));
      }
      Grant next = engine.acquire("abandoned", TTL, Duration.ZERO, "").join();
      assertThat(engine.release("abandoned", next.token()).join()).isTrue();
    });
  }
}
