package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A server that shuts down closes the monitor, then the node connections. A probe round still
 * under way then fails on every node; it must not report them down (a fresh-clone run logged
 * "is down: it does not answer (... node is closed)" for a dev-mode node while stopping).
 */
class NodeMonitorCloseTest {
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  /** Holds every probe it is sent until the test answers it. */
  private static final class HeldNode implements RedisNode {
    private final String name;
    final List<CompletableFuture<Object>> probes = new CopyOnWriteArrayList<>();

    HeldNode(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
      CompletableFuture<Object> reply = new CompletableFuture<>();
      probes.add(reply);
      return reply;
    }

    @Override
    public CompletableFuture<Object> command(String... args) {
      return CompletableFuture.failedFuture(new UnsupportedOperationException());
    }

    @Override
    public void close() {}
  }

  @Test
  void aRoundUnderWayWhenTheMonitorClosesChangesNoNodesStateAndNoRoundStartsAfterIt() throws Exception {
    List<HeldNode> nodes = List.of(new HeldNode("a"), new HeldNode("b"), new HeldNode("c"));
    EngineConfig config = EngineConfig.defaults();
    NodeMonitor monitor = new NodeMonitor(List.copyOf(nodes), new Keys(config.keyPrefix()), config, scheduler,
        () -> 0L, System::nanoTime, new SecureRandom());
    Map<RedisNode, NodeState> before = Map.copyOf(monitor.states());

    monitor.requestProbe();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (nodes.stream().anyMatch(n -> n.probes.isEmpty()) && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertThat(nodes).allSatisfy(n -> assertThat(n.probes).hasSize(1));

    monitor.close();
    nodes.forEach(n -> n.probes.get(0).completeExceptionally(new IllegalStateException("node " + n.name() + " is closed")));
    monitor.requestProbe();
    scheduler.submit(() -> { }).get(5, TimeUnit.SECONDS); // whatever the close left queued has run

    assertThat(monitor.states()).isEqualTo(before);
    assertThat(monitor.quorumUp()).isFalse();
    assertThat(nodes).allSatisfy(n -> assertThat(n.probes).hasSize(1));
  }
}
