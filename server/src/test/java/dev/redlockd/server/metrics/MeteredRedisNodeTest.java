package dev.redlockd.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import dev.redlockd.testing.Scrape;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** The decorator's bookkeeping over a stand-in node whose replies the test chooses (no lock logic here). */
class MeteredRedisNodeTest {

  @Test
  void timesEveryRequestAndCountsTimeoutsAndErrorsApartUnderTheNodesName() throws Exception {
    try (Metrics metrics = Metrics.on(System::nanoTime)) {
      metrics.serve(InetAddress.getLoopbackAddress(), 0);
      Replying stand = new Replying("10.0.0.7:6380");
      RedisNode node = metrics.meter(stand);

      stand.next = CompletableFuture.completedFuture("OK");
      assertThat(node.command("PING").join()).isEqualTo("OK");
      stand.next = CompletableFuture.failedFuture(new TimeoutException());
      assertThat(node.command("PING")).isCompletedExceptionally();
      stand.next = CompletableFuture.failedFuture(new IllegalStateException("ERR something"));
      assertThat(node.command("PING")).isCompletedExceptionally();

      Scrape s = Scrape.of(metrics.port());
      assertThat(node.name()).isEqualTo("10.0.0.7:6380");
      assertThat(s.value("redlockd_node_request_duration_seconds_count", "node", "10.0.0.7:6380")).isEqualTo(3);
      assertThat(s.value("redlockd_node_errors_total", "node", "10.0.0.7:6380", "reason", "timeout")).isEqualTo(1);
      assertThat(s.value("redlockd_node_errors_total", "node", "10.0.0.7:6380", "reason", "error")).isEqualTo(1);
    }
  }

  @Test
  void handsBackTheNodesOwnFutureSoACancelReachesTheNode() {
    Replying stand = new Replying("n:1");
    stand.next = new CompletableFuture<>();
    try (Metrics metrics = Metrics.on(System::nanoTime)) {
      RedisNode node = metrics.meter(stand);
      assertThat(node.command("PING")).isSameAs(stand.next);
    }
  }

  private static final class Replying implements RedisNode {
    private final String name;
    CompletableFuture<Object> next;

    Replying(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
      return next;
    }

    @Override
    public CompletableFuture<Object> command(String... args) {
      return next;
    }

    @Override
    public void close() {}
  }
}
