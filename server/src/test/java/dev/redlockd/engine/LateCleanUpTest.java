package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The clean-up of a failed round that reaches a slow node only after the caller's retry with
 * the same token was granted there (found by the simulation, seed 6): it must not take the
 * granted lease off that node, or the lease sits on fewer than a quorum while its holder
 * counts it valid. Real Redis nodes; only the timing of one clean-up is staged.
 */
class LateCleanUpTest {
  private static final Duration TTL = Duration.ofSeconds(30);
  private static final String KEY = "redlock:{late-clean-up}:lock";

  /** A real node whose clean-ups (while {@code slow}) time out for the engine and reach Redis later. */
  private static final class SlowCleanUps implements RedisNode {
    private final RedisNode real;
    volatile boolean slow;
    final List<Runnable> onTheWire = new ArrayList<>();

    SlowCleanUps(RedisNode real) {
      this.real = real;
    }

    @Override
    public String name() {
      return real.name();
    }

    @Override
    public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
      boolean cleanUp = script.name().equals("abandon") || script.name().equals("release");
      if (!slow || !cleanUp) {
        return real.eval(script, keys, args);
      }
      onTheWire.add(() -> real.eval(script, keys, args).join());
      return CompletableFuture.failedFuture(new TimeoutException(name() + " did not answer in time"));
    }

    void deliver() {
      onTheWire.forEach(Runnable::run);
      onTheWire.clear();
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

  @Test
  void aLateCleanUpLeavesTheLeaseOfARetryWithTheSameToken() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      List<SlowCleanUps> nodes = cluster.uris().stream()
          .map(uri -> new SlowCleanUps(new NettyRedisNode(NodeAddress.parse(uri), Duration.ofSeconds(2))))
          .toList();
      try (LockEngine engine = LockEngine.builder(List.copyOf(nodes), EngineHarness.testConfig()).build().start()) {
        String token = LockToken.generate(new SecureRandom());
        // Round 1: another lease still sits on nodes 1 and 2, so only node 0 takes the lock.
        for (int i = 1; i <= 2; i++) {
          cluster.call(i, "SET", KEY, "someone-else", "PX", "30000");
        }
        nodes.get(0).slow = true;
        assertThatThrownBy(() -> engine.acquire("late-clean-up", TTL, Duration.ZERO, token).join())
            .isInstanceOf(CompletionException.class).hasCauseInstanceOf(LockHeldException.class);
        assertThat(nodes.get(0).onTheWire).as("round 1's clean-up, on its way to node 0").hasSize(1);

        // The other lease goes; the caller retries with its token and is granted on all three.
        for (int i = 1; i <= 2; i++) {
          cluster.call(i, "DEL", KEY);
        }
        Grant retry = engine.acquire("late-clean-up", TTL, Duration.ZERO, token).join();

        nodes.get(0).deliver(); // round 1's clean-up arrives now
        nodes.get(0).slow = false;
        for (int i = 0; i < 3; i++) {
          assertThat(cluster.lockHolder(i, KEY)).as("holder on node %d", i).isEqualTo(token);
        }
        assertThat(engine.release("late-clean-up", retry.token()).join()).isTrue();
      } finally {
        nodes.forEach(SlowCleanUps::close);
      }
    }
  }
}
