package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The semaphore's limit key on real Redis nodes: it outlives every permit it guards, renewals
 * included, so a caller with another N is refused for as long as any permit is held.
 */
class SemaphoreLimitTest {
  private static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.start(3, EngineHarness.testConfig(), Duration.ofMillis(250));
    // On a busy machine the new cluster may still be seeding when start() gives up waiting.
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> h.engine.nodeStates().values()
        .stream().allMatch(s -> s == NodeState.UP));
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  private static Grant permit(String resource, int permits, Duration ttl) {
    return h.engine.acquirePermit(resource, permits, ttl, Duration.ZERO, "", "", "", null).join();
  }

  @Test
  void aPermitKeptPastItsFirstTtlStillKeepsAnotherNOut() throws Exception {
    Grant held = permit("limit-extended", 2, Duration.ofSeconds(1));
    for (int i = 0; i < 5; i++) {
      Thread.sleep(400);
      h.engine.extend("limit-extended", held.permit(), held.token(), Duration.ofSeconds(1)).join();
    }
    // A second past the grant's ttl: the limit the grant wrote would be gone without the renewals.
    assertThatThrownBy(() -> permit("limit-extended", 3, Duration.ofSeconds(1)))
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(SemaphoreMismatchException.class)
        .hasMessageContaining("has 2 permits; this caller asked for 3");
    for (int i = 0; i < h.cluster.size(); i++) {
      Object left = h.cluster.call(i, "PTTL", "redlock:semaphore:{limit-extended}:limit");
      assertThat((Long) left).as("node %d's limit outlives the permit", i).isPositive();
    }
  }

  @Test
  void aKeptPermitPushesItsLimitOutToo() throws Exception {
    Grant held = permit("limit-kept", 2, Duration.ofMillis(1500));
    java.util.concurrent.atomic.AtomicReference<LockEngineException> lost = new java.util.concurrent.atomic.AtomicReference<>();
    KeptLease kept = h.engine.keep("limit-kept", held.permit(), held.token(), Duration.ofMillis(1500),
        new KeptLease.Listener() {
          @Override
          public void held(Grant lease, long mark) {}

          @Override
          public void jeopardy(Grant lease, LockEngineException cause, long mark) {}

          @Override
          public void lost(LockEngineException cause) {
            lost.set(cause);
          }
        });
    kept.renewNow(null, 1);
    try {
      Thread.sleep(3500);
      // A busy machine can make renewals miss; then the permit is gone and the check proves nothing.
      assertThat(lost.get()).as("the kept permit was never lost (%s)", lost.get()).isNull();
      assertThatThrownBy(() -> permit("limit-kept", 5, Duration.ofSeconds(1)))
          .hasCauseInstanceOf(SemaphoreMismatchException.class);
    } finally {
      kept.release().join();
    }
  }

  @Test
  void onceEveryPermitIsGoneAndItsLimitRanOutAnotherNIsTaken() throws Exception {
    Grant first = permit("limit-changes", 2, Duration.ofMillis(200));
    assertThat(h.engine.release("limit-changes", first.permit(), first.token()).join()).isTrue();
    Thread.sleep(300);
    Grant other = permit("limit-changes", 4, Duration.ofSeconds(1));
    assertThat(other.permit()).isBetween(1, 4);
  }

  @Test
  void withNoWaitAFreePermitIsFoundWhereverTheRandomStartFell() {
    for (int i = 1; i <= 4; i++) {
      assertThat(permit("limit-fill", 4, Duration.ofSeconds(5)).permit()).isBetween(1, 4);
    }
    assertThatThrownBy(() -> permit("limit-fill", 4, Duration.ofSeconds(5)))
        .hasCauseInstanceOf(LockHeldException.class)
        .hasMessageContaining("no free permit of 4");
  }
}
