package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What one permit round concludes from canned acquire_permit.lua replies, and where the next goes. */
class PermitRoundTest {
  private static final String TOKEN = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final AtomicLong clock = new AtomicLong();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private Redlock redlock(List<RedisNode> nodes) {
    EngineConfig config = EngineConfig.defaults();
    Keys keys = new Keys(config.keyPrefix()).inSpace(Keys.SEMAPHORES);
    NodeMonitor monitor = new NodeMonitor(nodes, keys, config, scheduler, () -> 0L, clock::get,
        new java.security.SecureRandom());
    ScriptedNode.watchedBy(monitor, nodes, clock::get);
    return new Redlock(nodes, keys, config, clock::get, monitor, 42L);
  }

  /** acquire_permit.lua's reply: outcome, fence, incarnated, limit, mine, held. */
  private static ScriptedNode answering(String name, Object... reply) {
    return new ScriptedNode(name, script -> switch (script) {
      case "acquire_permit" -> List.of(reply);
      case "release", "abandon" -> List.of(1L, 1L);
      case "raise" -> 1L;
      default -> List.of("up", 0L, 0L);
    });
  }

  @Test
  void oneVotingNodeWithAnotherNFailsTheRoundAndItsWritesAreTakenBack() {
    ScriptedNode took = answering("took", 1L, "7", 1L, "3", 0L, "000");
    ScriptedNode took2 = answering("took2", 1L, "7", 1L, "3", 0L, "000");
    ScriptedNode other = answering("other", 3L, 0L, 1L, "4", 0L, "");
    assertThatThrownBy(() -> redlock(List.of(took, other, took2))
            .acquirePermit("jobs", 3, 2, TOKEN, "", Duration.ofSeconds(10)).join())
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(SemaphoreMismatchException.class)
        .hasMessageContaining("semaphore 'jobs' has 4 permits; this caller asked for 3");
    assertThat(took.calls).containsExactly("acquire_permit", "abandon");
    assertThat(took2.calls).containsExactly("acquire_permit", "abandon");
    assertThat(other.calls).containsExactly("acquire_permit");
  }

  @Test
  void aNodeOutOfTheVoteWithAnotherNDoesNotCount() {
    ScriptedNode quarantined = answering("quarantined", 3L, 0L, 0L, "4", 0L, "");
    Grant grant = redlock(List.of(answering("a", 1L, "7", 1L, "3", 0L, "000"), quarantined,
            answering("b", 1L, "7", 1L, "3", 0L, "000")))
        .acquirePermit("jobs", 3, 2, TOKEN, "", Duration.ofSeconds(10)).join();
    assertThat(grant.permit()).isEqualTo(2);
    assertThat(grant.fencingToken()).isEqualTo(7);
  }

  @Test
  void aRefusedRoundGoesNextToThePermitFreeOnTheMostNodes() {
    // Permit 1 tried: held by others on two nodes; permit 3 free on all three, permit 2 on one.
    Redlock redlock = redlock(List.of(answering("a", 0L, 0L, 1L, "3", 0L, "110"),
        answering("b", 0L, 0L, 1L, "3", 0L, "110"), answering("c", 1L, "5", 1L, "3", 0L, "010")));
    Throwable refused = catchCause(() -> redlock.acquirePermit("jobs", 3, 1, TOKEN, "", Duration.ofSeconds(10))
        .join());
    assertThat(refused).isInstanceOf(PermitsHeldException.class).hasMessageContaining("no free permit of 3");
    PermitRounds rounds = new PermitRounds(redlock, new Random(1), "jobs", 3, TOKEN, "", Duration.ofSeconds(10));
    assertThat(rounds.retryAtOnce(refused)).as("a permit is free on a quorum: at once").isTrue();
    assertThat(((PermitsHeldException) refused).freeOn(3)).isEqualTo(3);
  }

  @Test
  void aTokenThatHoldsAPermitOnAQuorumIsSentBackToIt() {
    Redlock redlock = redlock(List.of(answering("a", 4L, 0L, 1L, "3", 2L, "100"),
        answering("b", 4L, 0L, 1L, "3", 2L, "100"), answering("c", 1L, "5", 1L, "3", 0L, "100")));
    PermitsHeldException refused = (PermitsHeldException) catchCause(() ->
        redlock.acquirePermit("jobs", 3, 3, TOKEN, "", Duration.ofSeconds(10)).join());
    assertThat(refused.mine()).isEqualTo(2);
    PermitRounds rounds = new PermitRounds(redlock, new Random(1), "jobs", 3, TOKEN, "", Duration.ofSeconds(10));
    assertThat(rounds.retryAtOnce(refused)).isTrue();
  }

  @Test
  void withEveryPermitHeldOnAQuorumTheCallWaits() {
    Redlock redlock = redlock(List.of(answering("a", 0L, 0L, 1L, "2", 0L, "11"),
        answering("b", 0L, 0L, 1L, "2", 0L, "11"), answering("c", 1L, "5", 1L, "2", 0L, "00")));
    Throwable refused = catchCause(() -> redlock.acquirePermit("jobs", 2, 1, TOKEN, "", Duration.ofSeconds(10))
        .join());
    PermitRounds rounds = new PermitRounds(redlock, new Random(1), "jobs", 2, TOKEN, "", Duration.ofSeconds(10));
    assertThat(rounds.retryAtOnce(refused)).isFalse();
  }

  @Test
  void roundsThatKeepFindingAFreePermitTakenPauseAfterAFew() {
    Redlock redlock = redlock(List.of(answering("a", 0L, 0L, 1L, "2", 0L, "10"),
        answering("b", 0L, 0L, 1L, "2", 0L, "10"), answering("c", 0L, 0L, 1L, "2", 0L, "10")));
    Throwable refused = catchCause(() -> redlock.acquirePermit("jobs", 2, 1, TOKEN, "", Duration.ofSeconds(10))
        .join());
    PermitRounds rounds = new PermitRounds(redlock, new Random(1), "jobs", 2, TOKEN, "", Duration.ofSeconds(10));
    for (int i = 0; i < PermitRounds.AT_ONCE_IN_A_ROW; i++) {
      assertThat(rounds.retryAtOnce(refused)).isTrue();
    }
    assertThat(rounds.retryAtOnce(refused)).isFalse();
  }

  private static Throwable catchCause(Runnable call) {
    try {
      call.run();
    } catch (CompletionException e) {
      return e.getCause();
    }
    throw new AssertionError("the round was granted");
  }
}
