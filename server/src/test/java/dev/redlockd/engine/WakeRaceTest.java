package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Wake-ups racing the retries they replace: whatever their timing, one waiting Acquire has at
 * most one round in flight. Two rounds of one call could both be granted (the second refreshes
 * the first's lease), and the second grant, arriving for a call already answered, releases
 * the lease its caller now holds.
 */
class WakeRaceTest {

  @Test
  void aWaiterWokenWhileItsRetryStartsNeverRunsTwoRounds() throws Exception {
    // A node timeout of 1 s, not the harness's 50 ms: this test keeps a core busy publishing for
    // 3 s, and in a fresh-clone run (modules building beside it) no node answered a round within
    // 50 ms. What it counts, rounds of one call in flight at once, does not depend on it.
    try (EngineHarness h = EngineHarness.start(3, EngineHarness.testConfig(), Duration.ofSeconds(1))) {
      List<InFlight> counted = h.nodes.stream().map(InFlight::new).toList();
      // Retries every 1 to 2 ms, and notices as fast as Redis takes them: wakes land on
      // retries that are just starting, again and again.
      EngineConfig config = EngineHarness.testConfig().withRetryDelay(Duration.ofMillis(2)).withMaxWaitingAcquires(100);
      try (LockEngine engine = LockEngine.builder(List.copyOf(counted), config).build().start()) {
        Grant holder = engine.acquire("race", Duration.ofSeconds(10), Duration.ZERO, "").join();
        List<CompletableFuture<Grant>> waiters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
          waiters.add(engine.acquire("race", Duration.ofSeconds(10), Duration.ofSeconds(30), ""));
        }
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        int notices = 0;
        while (System.nanoTime() < until) {
          h.cluster.call(notices % 3, "PUBLISH", "redlock:{race}:released", "stray-" + notices);
          notices++;
        }
        assertThat(notices).isGreaterThan(100);
        engine.release("race", holder.token()).join();
        // Whoever is granted next (retries every 1-2 ms may beat the oldest waiter) releases.
        while (!waiters.isEmpty()) {
          Grant granted = (Grant) CompletableFuture.anyOf(waiters.toArray(CompletableFuture[]::new))
              .get(10, TimeUnit.SECONDS);
          waiters.removeIf(w -> w.isDone() && w.join() == granted);
          assertThat(engine.release("race", granted.token()).join())
              .as("a granted lease still held when its holder releases it").isTrue();
        }
      }
      int overlaps = counted.stream().mapToInt(c -> c.overlaps.get()).sum();
      assertThat(overlaps).as("acquire rounds of one call in flight at once on a node").isZero();
    }
  }

  /** A real node that counts, per token, acquire scripts sent but not yet answered. */
  private static final class InFlight extends ForwardingNode {
    private final ConcurrentHashMap<String, AtomicInteger> byToken = new ConcurrentHashMap<>();
    final AtomicInteger overlaps = new AtomicInteger();

    InFlight(RedisNode real) {
      super(real);
    }

    @Override
    public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
      if (!script.name().equals("acquire")) {
        return real.eval(script, keys, args);
      }
      AtomicInteger inFlight = byToken.computeIfAbsent(args.get(0), t -> new AtomicInteger());
      if (inFlight.incrementAndGet() > 1) {
        overlaps.incrementAndGet();
      }
      return real.eval(script, keys, args).whenComplete((reply, failure) -> inFlight.decrementAndGet());
    }
  }
}
