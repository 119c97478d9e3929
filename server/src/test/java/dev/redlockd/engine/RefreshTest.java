package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A holder's refresh (a same-token Acquire round with a new owner text) says "not held" only
 * when the round shows that no quorum can hold the lease; an Acquire in the same round still
 * says the lock is held by another owner.
 */
class RefreshTest {
  private static final Duration TTL = Duration.ofSeconds(5);
  private static final String TOKEN = "refresh-token-aaaaaaaaaaaaaaaaaaaaaaa";
  private static final String RIVAL = "refresh-rival-bbbbbbbbbbbbbbbbbbbbbbb";
  private static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.start(5, EngineHarness.testConfig());
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  private static void rivalOn(String resource, int... nodes) {
    for (int i : nodes) {
      h.cluster.call(i, "SET", "redlock:{" + resource + "}:lock", RIVAL + " 1 rival.1", "PX", "60000");
    }
  }

  private static Throwable failure(java.util.concurrent.CompletableFuture<?> call) {
    Throwable t = catchThrowable(call::join);
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  @Test
  void aRefreshThatHeardTooFewYesWhileSilentNodesMayHoldTheLeaseIsUnknownNotLost() {
    String resource = "refresh-frozen";
    h.onEveryNode(h.engine.acquire(resource, TTL, Duration.ZERO, TOKEN, "v1").join());
    rivalOn(resource, 2);
    h.cluster.pause(3, 4);
    try {
      assertThat(failure(h.engine.locks().refresh(resource, TOKEN, TTL, "v2")))
          .isInstanceOf(QuorumUnavailableException.class)
          .hasMessageContaining("may still hold the lease");
      // An Acquire of the same round, as before: held by another owner.
      assertThat(failure(h.engine.acquire(resource, TTL, Duration.ZERO, TOKEN, "v2")))
          .isInstanceOf(LockHeldException.class);
    } finally {
      h.cluster.resume(3, 4);
    }
    assertThat(h.engine.locks().refresh(resource, TOKEN, TTL, "v3").join().token()).isEqualTo(TOKEN);
  }

  @Test
  void aRefreshThatNoQuorumCanHoldAnyMoreIsNotHeld() {
    String resource = "refresh-gone";
    h.onEveryNode(h.engine.acquire(resource, TTL, Duration.ZERO, TOKEN, "v1").join());
    rivalOn(resource, 0, 1, 2);
    assertThat(failure(h.engine.locks().refresh(resource, TOKEN, TTL, "v2")))
        .isInstanceOf(LeaseNotHeldException.class);
  }
}
