package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What admission control reads: how long rounds wait for a quorum, averaged per window, on a manual clock. */
class BacklogTest {
  private static final String TOKEN = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  private final AtomicLong clock = new AtomicLong(1_000_000_000L);
  private final Backlog backlog = new Backlog(clock::get);
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private void advanceMs(long ms) {
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
  }

  private void record(int rounds, long ms) {
    for (int i = 0; i < rounds; i++) {
      backlog.record(TimeUnit.MILLISECONDS.toNanos(ms));
    }
  }

  @Test
  void aWindowWithTooFewRoundsSaysNothing() {
    record(Backlog.MIN_SAMPLES - 1, 500);
    assertThat(backlog.lateness()).isZero();
    advanceMs(100);
    assertThat(backlog.lateness()).as("a quiet server's one slow round is not a backlog").isZero();
  }

  @Test
  void theMeanOfTheCurrentOrTheLastWindowWhicheverIsLarger() {
    record(10, 2);
    assertThat(backlog.lateness()).isEqualTo(Duration.ofMillis(2));
    advanceMs(100);
    record(5, 40);
    record(5, 0);
    assertThat(backlog.lateness()).as("the current window, once it has enough rounds").isEqualTo(Duration.ofMillis(20));
    advanceMs(100);
    record(10, 1);
    assertThat(backlog.lateness()).as("the last window still counts for one window").isEqualTo(Duration.ofMillis(20));
    advanceMs(100);
    assertThat(backlog.lateness()).isEqualTo(Duration.ofMillis(1));
  }

  @Test
  void anIdleServerIsNotBehind() {
    record(20, 80);
    advanceMs(100);
    assertThat(backlog.lateness()).isEqualTo(Duration.ofMillis(80));
    advanceMs(250);
    assertThat(backlog.lateness()).as("no rounds for more than a window: nothing is waiting").isZero();
  }

  /** A node call that ends when the test says, at the manual clock's time then. */
  private static final class HeldNode implements RedisNode {
    final String name;
    final List<CompletableFuture<Object>> calls = new ArrayList<>();

    HeldNode(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public synchronized CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
      CompletableFuture<Object> call = new CompletableFuture<>();
      if (script.name().equals("probe")) {
        call.completeExceptionally(new TimeoutException());
      } else {
        calls.add(call);
      }
      return call;
    }

    @Override
    public CompletableFuture<Object> command(String... args) {
      return CompletableFuture.failedFuture(new UnsupportedOperationException());
    }

    @Override
    public void close() {}

    synchronized void answer(Object reply) {
      calls.forEach(c -> c.complete(reply));
    }

    synchronized void timeOut() {
      calls.forEach(c -> c.completeExceptionally(new TimeoutException()));
    }
  }

  private Redlock redlock(List<RedisNode> nodes) {
    EngineConfig config = EngineConfig.defaults();
    Keys keys = new Keys(config.keyPrefix());
    NodeMonitor monitor = new NodeMonitor(nodes, keys, config, scheduler, () -> 0L, clock::get,
        new java.security.SecureRandom());
    return new Redlock(nodes, keys, config, clock::get, monitor, 42L, backlog);
  }

  private List<HeldNode> nodes(int n) {
    List<HeldNode> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      nodes.add(new HeldNode("n" + i));
    }
    return nodes;
  }

  @Test
  void aRoundIsTimedUntilAQuorumOfItsNodesEndedNotUntilTheSlowestDid() {
    List<HeldNode> nodes = nodes(5);
    Redlock redlock = redlock(List.copyOf(nodes));
    for (int round = 0; round < Backlog.MIN_SAMPLES; round++) {
      redlock.extend("r" + round, TOKEN, Duration.ofSeconds(10));
    }
    advanceMs(3);
    nodes.get(0).answer(List.of(1L, 7L, 1L));
    nodes.get(1).answer(List.of(1L, 7L, 1L));
    nodes.get(2).timeOut(); // a timeout ends a node's call too: the third of the quorum
    advanceMs(50);
    nodes.get(3).timeOut(); // a node that is down: the rounds were decided without it
    nodes.get(4).timeOut();
    assertThat(backlog.lateness()).isEqualTo(Duration.ofMillis(3));
  }

  @Test
  void roundsWhoseQuorumAnswersLateReadAsLate() {
    List<HeldNode> nodes = nodes(5);
    Redlock redlock = redlock(List.copyOf(nodes));
    for (int round = 0; round < Backlog.MIN_SAMPLES; round++) {
      redlock.acquire("r" + round, TOKEN, "", Duration.ofSeconds(10));
    }
    nodes.get(0).answer(List.of(1L, 7L, 1L));
    nodes.get(1).answer(List.of(1L, 7L, 1L));
    advanceMs(45);
    nodes.get(2).answer(List.of(1L, 7L, 1L));
    assertThat(backlog.lateness()).isEqualTo(Duration.ofMillis(45));
  }
}
