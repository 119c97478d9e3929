package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.RedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A waiting Acquire whose caller's deadline has passed, before the caller's cancel reached the
 * engine: it starts no round, so it takes nothing. The deadline passes in real time (the
 * engine's monotonic clock must not jump: to the clock watch that would be every node's clock
 * stepping back), with the engine's scheduler held where no round may start meanwhile.
 */
class CallerDeadlineTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration CALLER_LEAVES_IN = Duration.ofSeconds(1);
  private static final String CALLERS_TOKEN = "callersOwnToken_0123456789-abc";

  private LockEngine engine(List<RedisNode> nodes, Duration retryDelay) {
    return engine(nodes, retryDelay, null);
  }

  private LockEngine engine(List<RedisNode> nodes, Duration retryDelay, ScheduledExecutorService scheduler) {
    EngineConfig config = EngineHarness.testConfig().withRetryDelay(retryDelay);
    LockEngine.Builder builder = LockEngine.builder(nodes, config);
    if (scheduler != null) {
      builder.scheduler(scheduler);
    }
    return builder.build().start();
  }

  /** Runs nothing else on the scheduler until {@code release} counts down. */
  private static void hold(ScheduledExecutorService scheduler, CountDownLatch release) throws InterruptedException {
    CountDownLatch held = new CountDownLatch(1);
    scheduler.execute(() -> {
      held.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    held.await();
  }

  private static List<RedisNode> nodes(RedisCluster cluster) {
    return cluster.uris().stream()
        .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), Duration.ofSeconds(2)))
        .toList();
  }

  /** Once every node has the server's subscription to the resource's release notices, the waiter waits. */
  private static void awaitWaiting(RedisCluster cluster, String resource) {
    String channel = "redlock:{" + resource + "}:released";
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      for (int i = 0; i < cluster.size(); i++) {
        assertThat(cluster.call(i, "PUBSUB", "NUMSUB", channel)).as("node %d", i)
            .isEqualTo(List.of(channel, 1L));
      }
    });
  }

  @Test
  void aReleaseAfterTheCallersDeadlineStartsNoRoundForItAndTheNextCallerGetsTheLock() throws Exception {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    CountDownLatch unhold = new CountDownLatch(1);
    try (RedisCluster cluster = RedisCluster.start(3)) {
      List<RedisNode> nodes = nodes(cluster);
      // Retries far apart, and the scheduler held: only the release can start the waiter's next round.
      try (LockEngine engine = engine(nodes, Duration.ofSeconds(40), scheduler)) {
        Grant holder = engine.acquire("gone", TTL, Duration.ZERO, "").join();
        hold(scheduler, unhold);
        long called = System.nanoTime();
        CompletableFuture<Grant> abandoned = engine.acquire("gone", TTL, Duration.ofSeconds(60), CALLERS_TOKEN,
            "", "", CALLER_LEAVES_IN);
        awaitWaiting(cluster, "gone");
        // The caller's deadline passes; its cancel is still on the way.
        TimeUnit.NANOSECONDS.sleep(called + CALLER_LEAVES_IN.toNanos() - System.nanoTime() + 1_000_000);
        assertThat(abandoned).as("no round ran since the caller's deadline").isNotDone();
        assertThat(engine.release("gone", holder.token()).join()).isTrue();

        Throwable failure = abandoned.handle((lease, e) -> e).get(10, TimeUnit.SECONDS);
        assertThat(failure).as("the abandoned call's outcome").isInstanceOf(CallerDeadlineException.class);
        unhold.countDown();
        Grant next = engine.acquire("gone", TTL, Duration.ZERO, "").join();
        assertThat(engine.release("gone", CALLERS_TOKEN).join()).isFalse();
        assertThat(engine.release("gone", next.token()).join()).isTrue();
      } finally {
        unhold.countDown();
        nodes.forEach(RedisNode::close);
      }
    } finally {
      scheduler.shutdownNow();
    }
  }

  @Test
  void retriesEndAtTheCallersDeadlineWhateverWaitItAskedFor() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      List<RedisNode> nodes = nodes(cluster);
      try (LockEngine engine = engine(nodes, Duration.ofMillis(200))) {
        Grant holder = engine.acquire("waits", TTL, Duration.ZERO, "").join();
        CompletableFuture<Grant> abandoned = engine.acquire("waits", TTL, Duration.ofSeconds(60), CALLERS_TOKEN,
            "", "", CALLER_LEAVES_IN);
        awaitWaiting(cluster, "waits");

        // A retry at the caller's deadline (or the first after it) finds the caller gone. The answer is its deadline,
        // not ABORTED: an ABORTED sent just before the caller's own deadline fires would tell it
        // the wait it asked for ran out, which it did not.
        Throwable failure = abandoned.handle((lease, e) -> e).get(10, TimeUnit.SECONDS);
        assertThat(failure).isInstanceOf(CallerDeadlineException.class);
        assertThat(engine.release("waits", holder.token()).join()).isTrue();
      } finally {
        nodes.forEach(RedisNode::close);
      }
    }
  }

  @Test
  void aCallWhoseDeadlineHasPassedBeforeItStartsTakesNothing() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      List<RedisNode> nodes = nodes(cluster);
      try (LockEngine engine = engine(nodes, Duration.ofMillis(200))) {
        CompletableFuture<Grant> late = engine.acquire("late", TTL, Duration.ofSeconds(60), CALLERS_TOKEN,
            "", "", Duration.ofMillis(-1));
        Throwable failure = late.handle((lease, e) -> e).get(10, TimeUnit.SECONDS);
        assertThat(failure).isInstanceOf(CallerDeadlineException.class);
        for (int i = 0; i < cluster.size(); i++) {
          assertThat(cluster.get(i, "redlock:{late}:lock")).as("node %d", i).isNull();
        }
        Grant next = engine.acquire("late", TTL, Duration.ZERO, "").join();
        assertThat(engine.release("late", next.token()).join()).isTrue();
      } finally {
        nodes.forEach(RedisNode::close);
      }
    }
  }
}
