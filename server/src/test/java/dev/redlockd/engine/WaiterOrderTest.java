package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Who gets a released lock: this server's waiters in the order they started waiting, at once;
 * waiters on another server over the same nodes at once too, told by the nodes' pub/sub.
 */
class WaiterOrderTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  /** Long enough that a waiter granted quickly can only have been woken by the release. */
  private static final Duration LONG_RETRY = Duration.ofSeconds(20);
  private static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.start(3, EngineHarness.testConfig()
        .withRetryDelay(LONG_RETRY).withMaxWaitingAcquires(100));
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void releasesHandTheLockToThisServersWaitersInTheOrderTheyCameEachAtOnce() throws Exception {
    Grant holder = h.engine.acquire("fifo", TTL, Duration.ZERO, "").join();
    List<CompletableFuture<Grant>> waiters = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      waiters.add(h.engine.acquire("fifo", TTL, Duration.ofSeconds(60), ""));
      Thread.sleep(30); // each has made its first round and is waiting before the next comes
    }
    Grant current = holder;
    for (int i = 0; i < waiters.size(); i++) {
      long released = System.nanoTime();
      h.engine.release("fifo", current.token()).join();
      Grant next = waiters.get(i).get(2, TimeUnit.SECONDS);
      long handOffMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released);
      assertThat(handOffMs).as("hand-off to waiter %d", i).isLessThan(1000);
      for (int later = i + 1; later < waiters.size(); later++) {
        assertThat(waiters.get(later)).as("waiter %d while %d holds", later, i).isNotDone();
      }
      assertThat(next.fencingToken()).isGreaterThan(current.fencingToken());
      current = next;
    }
    h.engine.release("fifo", current.token()).join();
  }

  /**
   * The release's notice reaches the other server through the nodes' pub/sub: its waiter, whose
   * own retries are 10 to 20 s apart, gets the lock within milliseconds, each way round.
   */
  @Test
  void aWaiterOnAnotherServerGetsALockReleasedHereWithinMilliseconds() throws Exception {
    try (LockEngine far = LockEngine.builder(h.nodes, EngineHarness.testConfig().withRetryDelay(LONG_RETRY))
        .build().start()) {
      List<Long> handOffMicros = new ArrayList<>();
      LockEngine[] servers = {h.engine, far};
      Grant held = h.engine.acquire("cross", TTL, Duration.ZERO, "").join();
      for (int i = 0; i < 40; i++) {
        LockEngine holder = servers[i % 2];
        LockEngine next = servers[(i + 1) % 2];
        CompletableFuture<Grant> waiter = next.acquire("cross", TTL, Duration.ofSeconds(30), "");
        Thread.sleep(20); // its first round failed: it waits
        assertThat(waiter).isNotDone();
        long released = System.nanoTime();
        holder.release("cross", held.token()).join();
        held = waiter.get(2, TimeUnit.SECONDS);
        handOffMicros.add(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - released));
      }
      servers[0].release("cross", held.token()).join();
      handOffMicros.sort(null);
      long p50 = handOffMicros.get(handOffMicros.size() / 2);
      System.out.println("cross-server hand-off: p50 " + p50 + " us, max " + handOffMicros.get(handOffMicros.size() - 1)
          + " us over " + handOffMicros.size());
      assertThat(p50).as("p50 hand-off across servers, us").isLessThan(10_000);
      assertThat(handOffMicros.get(handOffMicros.size() - 1)).as("slowest, us (a retry would be 10 s)")
          .isLessThan(2_000_000);
    }
  }

  /** With notices off, the other server's waiter learns of the release only at its next retry. */
  @Test
  void withoutNoticesAWaiterOnAnotherServerWaitsForItsRetry() throws Exception {
    try (LockEngine deaf = LockEngine.builder(h.nodes, EngineHarness.testConfig().withRetryDelay(LONG_RETRY))
        .notices(false).build().start()) {
      Grant holder = h.engine.acquire("deaf", TTL, Duration.ZERO, "").join();
      CompletableFuture<Grant> waiter = deaf.acquire("deaf", TTL, Duration.ofSeconds(30), "");
      Thread.sleep(100);
      h.engine.release("deaf", holder.token()).join();
      Thread.sleep(500);
      assertThat(waiter).as("woken before its retry, 10 to 20 s away").isNotDone();
      waiter.cancel(true);
    }
  }

  /**
   * The oldest waiter may be in the middle of a round when the lock is released (the round
   * began while the lock was still held, and will fail): it still gets the next try, and the
   * waiter behind it is not woken past it.
   */
  @Test
  void theOldestWaiterGetsTheLockEvenWhenTheReleaseCameDuringOneOfItsRounds() throws Exception {
    String first = LockToken.generate(new SecureRandom());
    List<HeldAnswers> gated = h.nodes.stream().map(n -> new HeldAnswers(n, first)).toList();
    EngineConfig config = EngineHarness.testConfig().withRetryDelay(LONG_RETRY).withMaxWaitingAcquires(100);
    try (LockEngine engine = LockEngine.builder(List.copyOf(gated), config).build().start()) {
      Grant holder = engine.acquire("mid-round", TTL, Duration.ZERO, "").join();
      CompletableFuture<Grant> oldest = engine.acquire("mid-round", TTL, Duration.ofSeconds(60), first);
      Thread.sleep(50);
      CompletableFuture<Grant> next = engine.acquire("mid-round", TTL, Duration.ofSeconds(60), "");
      Thread.sleep(50);

      // A stray lease on one node, released: that wakes the oldest waiter while the holder
      // still has the other two, so its round fails, and its answers are held back meanwhile.
      gated.forEach(HeldAnswers::hold);
      String stray = LockToken.generate(new SecureRandom());
      h.cluster.call(0, "SET", "redlock:{mid-round}:lock", stray + " 1 stray-round", "PX", "10000");
      engine.release("mid-round", stray).join();
      assertThat(gated.get(1).heldRound.await(2, TimeUnit.SECONDS)).as("the oldest waiter's round is under way").isTrue();

      engine.release("mid-round", holder.token()).join();
      Thread.sleep(200);
      assertThat(next).as("the younger waiter, while the oldest is in a round").isNotDone();
      gated.forEach(HeldAnswers::answer);

      Grant granted = oldest.get(2, TimeUnit.SECONDS);
      assertThat(next).isNotDone();
      engine.release("mid-round", granted.token()).join();
      engine.release("mid-round", next.get(2, TimeUnit.SECONDS).token()).join();
    }
  }

  /** A real node whose answers to one token's acquire script are held back while asked to. */
  private static final class HeldAnswers implements RedisNode {
    private final RedisNode real;
    private final String token;
    private final CountDownLatch heldRound = new CountDownLatch(1);
    private volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);

    HeldAnswers(RedisNode real, String token) {
      this.real = real;
      this.token = token;
    }

    void hold() {
      gate = new CompletableFuture<>();
    }

    void answer() {
      gate.complete(null);
    }

    @Override
    public String name() {
      return real.name();
    }

    @Override
    public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
      CompletableFuture<Object> reply = real.eval(script, keys, args);
      CompletableFuture<Void> g = gate;
      if (!script.name().equals("acquire") || !args.contains(token) || g.isDone()) {
        return reply;
      }
      heldRound.countDown();
      return reply.thenCombine(g, (r, ignored) -> r);
    }

    @Override
    public CompletableFuture<Object> command(String... args) {
      return real.command(args);
    }

    @Override
    public void close() {} // the harness closes the real node
  }
}
