package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Which nodes a thrifty round asks, in which order, and when it widens, with canned node replies. */
class ThriftyRoundTest {
  private static final String TOKEN = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  private static final Duration TTL = Duration.ofSeconds(10);
  private ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final AtomicLong clock = new AtomicLong();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  /** Five nodes answering each script as {@code replies} says for them at the time of the call. */
  private final Map<String, Map<String, Object>> replies = new ConcurrentHashMap<>();
  private final List<ScriptedNode> nodes = new ArrayList<>();
  private Redlock redlock;

  private NodeMonitor monitor;

  /** Five nodes, every one probed UP but those named in {@code down}, which do not answer probes. */
  private void fiveNodes(String... down) {
    for (int i = 0; i < 5; i++) {
      String name = "node" + i;
      Map<String, Object> mine = new ConcurrentHashMap<>(Map.of(
          "acquire", List.of(1L, 7L, 1L),
          "extend", List.of(1L, 1L, 7L),
          "restore", List.of(1L, 1L),
          "release", List.of(1L, 1L),
          "abandon", List.of(1L, 1L),
          "probe", List.of("up", 0L, 0L)));
      replies.put(name, mine);
      nodes.add(new ScriptedNode(name, script -> mine.get(script)));
    }
    EngineConfig config = EngineConfig.defaults().withThriftyRounds(true);
    Keys keys = new Keys(config.keyPrefix());
    List<RedisNode> all = List.copyOf(nodes);
    monitor = new NodeMonitor(all, keys, config, scheduler, () -> 0L, clock::get, new java.security.SecureRandom());
    ScriptedNode.watchedBy(monitor, all, clock::get);
    for (String name : down) {
      replies.get(name).remove("probe");
    }
    // Probed before the test, so that no probe changes the order under a round.
    monitor.start(Duration.ofSeconds(1)).join();
    for (ScriptedNode node : nodes) {
      assertThat(monitor.up(node)).as(node.name()).isEqualTo(!List.of(down).contains(node.name()));
    }
    redlock = new Redlock(all, keys, config, clock::get, monitor, 42L);
  }

  /** The nodes in the order a round for the lock on "r" asks them. */
  private List<ScriptedNode> inOrder() {
    List<ScriptedNode> order = new ArrayList<>();
    for (int i : redlock.order(redlock.placement("r", 0))) {
      order.add(nodes.get(i));
    }
    return order;
  }

  private void answer(ScriptedNode node, String script, Object reply) {
    if (reply == null) {
      replies.get(node.name()).remove(script); // no reply: the call times out
    } else {
      replies.get(node.name()).put(script, reply);
    }
  }

  @Test
  void aGrantAsksTheFirstQuorumOfTheKeysOrderOnly() {
    fiveNodes();
    List<ScriptedNode> order = inOrder();

    Grant lease = redlock.acquire("r", TOKEN, "", TTL).join();

    assertThat(lease.fencingToken()).isEqualTo(7L);
    for (int i = 0; i < 5; i++) {
      assertThat(order.get(i).calls).as("node %d of the order", i).isEqualTo(i < 3 ? List.of("acquire") : List.of());
    }
  }

  @Test
  void aNodeKnownDownIsAskedLast() {
    fiveNodes();
    String first = inOrder().get(0).name();
    stop();
    nodes.clear();
    replies.clear();
    fiveNodesWithFreshScheduler(first);
    List<ScriptedNode> order = inOrder();
    assertThat(order.get(4).name()).isEqualTo(first);

    redlock.acquire("r", TOKEN, "", TTL).join();

    assertThat(order.get(4).calls).isEmpty();
    for (int i = 0; i < 3; i++) {
      assertThat(order.get(i).calls).containsExactly("acquire");
    }
  }

  private void fiveNodesWithFreshScheduler(String down) {
    scheduler = Executors.newSingleThreadScheduledExecutor();
    fiveNodes(down);
  }

  @Test
  void aRefusalAndATimeoutEachWidenTheRoundToTheNextNodeAtOnce() {
    fiveNodes();
    List<ScriptedNode> order = inOrder();
    answer(order.get(0), "acquire", List.of(0L, 0L, 1L));
    answer(order.get(2), "acquire", null);

    Grant lease = redlock.acquire("r", TOKEN, "", TTL).join();

    assertThat(lease.fencingToken()).isEqualTo(7L);
    assertThat(order.get(3).calls).containsExactly("acquire");
    assertThat(order.get(4).calls).containsExactly("acquire");
    assertThat(order.get(0).calls).containsExactly("acquire");
  }

  @Test
  void aRefusedRoundCleansUpWhereItWroteAndNowhereItDidNotAsk() {
    fiveNodes();
    List<ScriptedNode> order = inOrder();
    for (int i = 1; i < 4; i++) {
      answer(order.get(i), "acquire", List.of(0L, 0L, 1L));
    }

    assertThatThrownBy(() -> redlock.acquire("r", TOKEN, "", TTL).join())
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(LockHeldException.class);
    // Three refusals of five: no quorum can say yes, and every node was asked by then.
    assertThat(order.get(0).calls).containsExactly("acquire", "abandon");
    assertThat(order.get(4).calls).containsExactly("acquire", "abandon");
    assertThat(order.get(1).calls).containsExactly("acquire");
  }

  @Test
  void aRenewalThatFindsTwoHoldersOfFivePutsTheLeaseBackOnTheNextFreeNode() {
    fiveNodes();
    List<ScriptedNode> order = inOrder();
    redlock.acquire("r", TOKEN, "", TTL).join();
    // The third holder restarted empty and rejoined; the others never held it.
    for (int i = 2; i < 5; i++) {
      answer(order.get(i), "extend", List.of(1L, 0L, 0L));
    }
    answer(order.get(3), "restore", List.of(0L, 1L)); // another token holds it there

    Grant renewed = redlock.extend("r", TOKEN, TTL).join();

    assertThat(renewed.fencingToken()).isEqualTo(7L);
    assertThat(order.get(2).calls).containsExactly("acquire", "extend", "restore");
    assertThat(order.get(3).calls).containsExactly("extend", "restore");
    assertThat(order.get(4).calls).containsExactly("extend", "restore");
  }

  @Test
  void noLeaseIsPutBackOnceItsValidityRanOutOrForALeaseThisReplicaDidNotGrant() {
    fiveNodes();
    List<ScriptedNode> order = inOrder();
    for (int i = 2; i < 5; i++) {
      answer(order.get(i), "extend", List.of(1L, 0L, 0L));
    }
    // Never granted through this replica.
    assertThatThrownBy(() -> redlock.extend("r", TOKEN, TTL).join()).hasCauseInstanceOf(LeaseNotHeldException.class);

    for (int i = 0; i < 5; i++) {
      answer(order.get(i), "extend", List.of(1L, 1L, 7L));
    }
    redlock.acquire("r", TOKEN, "", TTL).join();
    for (int i = 2; i < 5; i++) {
      answer(order.get(i), "extend", List.of(1L, 0L, 0L));
    }
    clock.addAndGet(TTL.toNanos()); // the validity ran out
    assertThatThrownBy(() -> redlock.extend("r", TOKEN, TTL).join()).hasCauseInstanceOf(LeaseNotHeldException.class);
    for (ScriptedNode node : nodes) {
      assertThat(node.calls).doesNotContain("restore");
    }
  }
}
