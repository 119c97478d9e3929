package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Which nodes a round talks to, and what it concludes, with canned node replies. */
class RedlockRoundTest {
  private static final String TOKEN = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final AtomicLong clock = new AtomicLong();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private Redlock redlock(List<RedisNode> nodes) {
    EngineConfig config = EngineConfig.defaults();
    Keys keys = new Keys(config.keyPrefix());
    NodeMonitor monitor = new NodeMonitor(nodes, keys, config, scheduler, () -> 0L, clock::get,
        new java.security.SecureRandom());
    ScriptedNode.watchedBy(monitor, nodes, clock::get);
    return new Redlock(nodes, keys, config, clock::get, monitor, 42L);
  }

  private static ScriptedNode answering(String name, List<Long> acquireReply) {
    return new ScriptedNode(name, script -> switch (script) {
      case "acquire" -> acquireReply;
      case "release", "abandon" -> List.of(1L, 1L);
      case "raise" -> 1L;
      default -> List.of("up", 0L, 0L);
    });
  }

  @Test
  void failedRoundDeletesWhereItWroteAndWhereNoAnswerCameButNotWhereItWasRefused() {
    ScriptedNode took = answering("took", List.of(1L, 7L, 1L));
    ScriptedNode refused = answering("refused", List.of(0L, 0L, 1L));
    ScriptedNode refused2 = answering("refused2", List.of(0L, 0L, 1L));
    ScriptedNode silent = ScriptedNode.silent("silent");
    ScriptedNode refreshed = answering("refreshed", List.of(2L, 7L, 1L));

    assertThatThrownBy(() -> redlock(List.of(took, refused, refused2, silent, refreshed))
            .acquire("r", TOKEN, "", Duration.ofSeconds(10)).join())
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(LockHeldException.class);
    assertThat(took.calls).containsExactly("acquire", "abandon");
    assertThat(silent.calls).containsExactly("acquire", "abandon");
    assertThat(refused.calls).containsExactly("acquire");
    // A lease this token already held was granted by an earlier call: not this round's to delete.
    assertThat(refreshed.calls).containsExactly("acquire");
  }

  @Test
  void grantRaisesOnlyTheLaggingNodesToTheMaxFence() {
    ScriptedNode ahead = answering("ahead", List.of(1L, 9L, 1L));
    ScriptedNode behind = answering("behind", List.of(1L, 4L, 1L));
    ScriptedNode level = answering("level", List.of(1L, 9L, 1L));

    Grant lease = redlock(List.of(ahead, behind, level)).acquire("r", TOKEN, "", Duration.ofSeconds(10)).join();
    assertThat(lease.fencingToken()).isEqualTo(9L);
    assertThat(behind.calls).containsExactly("acquire", "raise");
    assertThat(ahead.calls).containsExactly("acquire");
    assertThat(level.calls).containsExactly("acquire");
  }

  @Test
  void nodesWithoutTheirIncarnationKeyDoNotVote() {
    ScriptedNode a = answering("a", List.of(1L, 3L, 1L));
    ScriptedNode restartedB = answering("b", List.of(1L, 1L, 0L));
    ScriptedNode restartedC = answering("c", List.of(1L, 1L, 0L));

    assertThatThrownBy(() -> redlock(List.of(a, restartedB, restartedC))
            .acquire("r", TOKEN, "", Duration.ofSeconds(10)).join())
        .hasCauseInstanceOf(QuorumUnavailableException.class)
        .hasMessageContaining("3 of 3 Redis nodes answered, 2 of them not voting");
  }

  @Test
  void validityIsTtlLessElapsedLessDrift() {
    List<Long> yes = List.of(1L, 1L, 1L);
    ScriptedNode a = new ScriptedNode("a", script -> {
      // The round takes 30 ms. Only the acquire script counts: the probe that the round's
      // replies ask for runs on the scheduler thread and may land before validity is computed.
      if (script.equals("acquire")) {
        clock.addAndGet(Duration.ofMillis(30).toNanos());
      }
      return yes;
    });
    Grant lease = redlock(List.of(a, answering("b", yes), answering("c", yes)))
        .acquire("r", TOKEN, "", Duration.ofSeconds(1)).join();
    // 1000 - 30 - (1000 * 0.01 + 2)
    assertThat(lease.validity()).isEqualTo(Duration.ofMillis(958));
  }

  @Test
  void roundSlowerThanTheTtlGrantsNothing() {
    List<Long> yes = List.of(1L, 1L, 1L);
    ScriptedNode slow = new ScriptedNode("slow", script -> {
      if (script.equals("acquire")) {
        clock.addAndGet(Duration.ofMillis(200).toNanos());
      }
      return script.equals("acquire") ? yes : List.of(1L, 1L);
    });
    assertThatThrownBy(() -> redlock(List.of(slow, answering("b", yes), answering("c", yes)))
            .acquire("r", TOKEN, "", Duration.ofMillis(100)).join())
        .hasCauseInstanceOf(QuorumUnavailableException.class)
        .hasMessageContaining("longer than the ttl");
    assertThat(slow.calls).containsExactly("acquire", "abandon");
  }

  /** A node whose lock-script answers come only when the test gives them. */
  private static final class LateNode implements RedisNode {
    private final String name;
    final List<String> calls = new CopyOnWriteArrayList<>();
    private final List<CompletableFuture<Object>> unanswered =
        new CopyOnWriteArrayList<>();

    LateNode(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public CompletableFuture<Object> eval(LuaScript script,
        List<String> keys, List<String> args) {
      CompletableFuture<Object> reply = new CompletableFuture<>();
      if (!script.name().equals("probe")) {
        calls.add(script.name());
        unanswered.add(reply);
      }
      return reply;
    }

    /** Answers every lock script sent so far (acquires, in these tests) with {@code reply} and the node's TIME. */
    void answer(Object reply) {
      unanswered.forEach(f -> f.complete(ScriptedNode.timed("acquire", reply, ScriptedNode.MICROS)));
    }

    @Override
    public CompletableFuture<Object> command(String... args) {
      return CompletableFuture.failedFuture(new UnsupportedOperationException());
    }

    @Override
    public void close() {}
  }

  @Test
  void grantComesOnceAQuorumTookTheLockWithoutWaitingForTheSlowestNodes() {
    LateNode late1 = new LateNode("late1");
    LateNode late2 = new LateNode("late2");
    List<RedisNode> nodes = List.of(late1, answering("a", List.of(1L, 5L, 1L)), late2,
        answering("b", List.of(1L, 5L, 1L)), answering("c", List.of(1L, 4L, 1L)));

    CompletableFuture<Grant> lease = redlock(nodes).acquire("r", TOKEN, "", Duration.ofSeconds(10));
    assertThat(lease).isCompleted();
    assertThat(lease.join().fencingToken()).isEqualTo(5L);
    // Late answers change no grant: a later quorum meets a, b or c. A late node that drew a
    // higher fence is settled down to the grant's, so renewals keep reporting 5; one that
    // refused is left alone.
    late1.answer(List.of(1L, 9L, 1L));
    late2.answer(List.of(0L, 0L, 1L));
    assertThat(late1.calls).containsExactly("acquire", "settle");
    assertThat(late2.calls).containsExactly("acquire");
  }

  @Test
  void roundShortOfAQuorumWaitsForEveryNodeBeforeItCleansUp() {
    LateNode late = new LateNode("late");
    ScriptedNode took = answering("took", List.of(1L, 5L, 1L));
    List<RedisNode> nodes = List.of(took, answering("took2", List.of(1L, 5L, 1L)), late,
        answering("refused", List.of(0L, 0L, 1L)), answering("refused2", List.of(0L, 0L, 1L)));

    CompletableFuture<Grant> lease = redlock(nodes).acquire("r", TOKEN, "", Duration.ofSeconds(10));
    assertThat(lease).isNotDone();
    assertThat(took.calls).containsExactly("acquire");
    late.answer(List.of(0L, 0L, 1L));
    assertThatThrownBy(lease::join).hasCauseInstanceOf(LockHeldException.class);
    assertThat(took.calls).containsExactly("acquire", "abandon");
    assertThat(late.calls).containsExactly("acquire");
  }

  @Test
  void releaseAnswersOnceAQuorumDeleted() {
    LateNode late1 = new LateNode("late1");
    LateNode late2 = new LateNode("late2");
    List<RedisNode> nodes = List.of(late1, late2, answering("a", List.of()), answering("b", List.of()),
        answering("c", List.of()));

    CompletableFuture<Tally> released = redlock(nodes).release("r", TOKEN, "notice-1");
    assertThat(released).isCompleted();
    assertThat(released.join().quorumSaidYes()).isTrue();
    assertThat(late1.calls).containsExactly("release");
  }
}
