package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Waiting Acquire calls: wake-ups, the wait running out, cancellation, the waiting limit. */
class AcquireWaitTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static EngineHarness h;

  @BeforeAll
  static void start() {
    // A long retry delay: a waiter granted quickly can only have been woken by the release.
    EngineConfig config = new EngineConfig("redlock:", 0.01, Duration.ofMillis(10), Duration.ofHours(1),
        Duration.ofSeconds(20), 2, Duration.ofMillis(100));
    h = EngineHarness.start(3, config);
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void releaseThroughThisEngineWakesTheOldestWaiterAtOnce() throws Exception {
    Grant holder = h.engine.acquire("wake", TTL, Duration.ZERO, "").join();
    CompletableFuture<Grant> waiter = h.engine.acquire("wake", TTL, Duration.ofSeconds(30), "");
    Thread.sleep(100);
    assertThat(waiter).isNotDone();
    long released = System.nanoTime();
    h.engine.release("wake", holder.token()).join();
    Grant next = waiter.get(2, TimeUnit.SECONDS);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released)).isLessThan(1000);
    assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
    h.engine.release("wake", next.token()).join();
  }

  @Test
  void waitRunningOutEndsWithLockHeld() {
    Grant holder = h.engine.acquire("wait-out", TTL, Duration.ZERO, "").join();
    long start = System.nanoTime();
    CompletableFuture<Grant> waiter = h.engine.acquire("wait-out", TTL, Duration.ofMillis(300), "");
    assertThatThrownBy(waiter::join).hasCauseInstanceOf(LockHeldException.class);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(250L, 2000L);
    h.engine.release("wait-out", holder.token()).join();
  }

  @Test
  void cancelledWaiterTakesNothingAfterwards() throws Exception {
    Grant holder = h.engine.acquire("cancel", TTL, Duration.ZERO, "").join();
    String token = LockToken.generate(new java.security.SecureRandom());
    CompletableFuture<Grant> waiter = h.engine.acquire("cancel", TTL, Duration.ofSeconds(30), token);
    waiter.cancel(false);
    h.engine.release("cancel", holder.token()).join();
    Thread.sleep(200);
    // Had the cancelled call taken the lock, this token would hold it now.
    assertThat(h.engine.release("cancel", token).join()).isFalse();
    Grant other = h.engine.acquire("cancel", TTL, Duration.ZERO, "").join();
    h.engine.release("cancel", other.token()).join();
  }

  @Test
  void callsPastTheWaitingLimitAreRefused() {
    Grant holder = h.engine.acquire("limit", TTL, Duration.ZERO, "").join();
    CompletableFuture<Grant> a = h.engine.acquire("limit", TTL, Duration.ofSeconds(30), "");
    CompletableFuture<Grant> b = h.engine.acquire("limit", TTL, Duration.ofSeconds(30), "");
    CompletableFuture<Grant> c = h.engine.acquire("limit", TTL, Duration.ofSeconds(30), "");
    assertThatThrownBy(c::join).isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(LimitExceededException.class);
    a.cancel(false);
    b.cancel(false);
    // Cancelled calls free their places.
    CompletableFuture<Grant> d = h.engine.acquire("limit", TTL, Duration.ofSeconds(30), "");
    assertThat(d).isNotDone();
    d.cancel(false);
    h.engine.release("limit", holder.token()).join();
  }

  @Test
  void aWaitOfCenturiesNeitherOverflowsNorKeepsAWaitingPlace() {
    // More calls than the limit (2) of waiting places: each is granted at once and gives its place back.
    for (int i = 0; i < 3; i++) {
      Grant lease = h.engine.acquire("centuries-" + i, TTL, Duration.ofSeconds(Long.MAX_VALUE), "").join();
      h.engine.release(lease.resource(), lease.token()).join();
    }
    Grant holder = h.engine.acquire("centuries", TTL, Duration.ZERO, "").join();
    CompletableFuture<Grant> a = h.engine.acquire("centuries", TTL, Duration.ofSeconds(Long.MAX_VALUE), "");
    CompletableFuture<Grant> b = h.engine.acquire("centuries", TTL, Duration.ofSeconds(30), "");
    assertThat(a).isNotDone();
    assertThat(b).isNotDone();
    a.cancel(false);
    b.cancel(false);
    h.engine.release("centuries", holder.token()).join();
  }
}
