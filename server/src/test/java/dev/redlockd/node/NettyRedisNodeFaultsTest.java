package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.testing.RedisCluster;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The node client when its node refuses connections, is reached by name, or stops answering. */
class NettyRedisNodeFaultsTest {
  private final ExecutorService lookups = Executors.newCachedThreadPool();
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    Collections.reverse(closing);
    for (AutoCloseable c : closing) {
      c.close();
    }
    lookups.shutdownNow();
  }

  private <T extends AutoCloseable> T closeLater(T resource) {
    closing.add(resource);
    return resource;
  }

  private static Throwable failureOf(CompletableFuture<Object> call) {
    return call.handle((reply, failure) -> failure instanceof CompletionException c ? c.getCause() : failure).join();
  }

  @Test
  void aNodeThatRefusesConnectionsIsTriedWithBackoffFailsCallsFastAndIsUsedAgainOnceBack() throws Exception {
    RedisCluster cluster = closeLater(RedisCluster.start(1));
    RedisIo io = closeLater(RedisIo.start(2));
    AtomicInteger attempts = new AtomicInteger(); // every connect resolves the host first
    OffLoopResolver counting = new OffLoopResolver(host -> {
      attempts.incrementAndGet();
      return InetAddress.getAllByName(host);
    }, lookups);
    Duration timeout = Duration.ofSeconds(1);
    NettyRedisNode node = closeLater(new NettyRedisNode(NodeAddress.parse(cluster.uris().get(0)), timeout, io, null,
        counting, RedisConnection.MAX_PENDING));
    assertThat(node.command("PING").get(5, TimeUnit.SECONDS)).isEqualTo("PONG");
    cluster.kill(0);
    int before = attempts.get();

    // 2 seconds of calls every 2 ms against a port nobody listens on.
    List<Long> millis = new ArrayList<>();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    int calls = 0;
    while (System.nanoTime() < end) {
      long start = System.nanoTime();
      Throwable failure = failureOf(node.command("PING"));
      millis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
      assertThat(failure).isInstanceOf(NodeConnectionException.class);
      calls++;
      Thread.sleep(2);
    }
    int connects = attempts.get() - before;
    Collections.sort(millis);
    // Without backoff every call would connect. With it, per connection: one at once, then
    // waits of 12.5-25, 25-50, ... ms capped at 0.5-1 s: at most about a dozen in 2 s.
    assertThat(calls).isGreaterThan(300);
    assertThat(connects).isBetween(2, 2 * 12);
    // Fast: a call while the node is known down does not wait out a connect or the timeout.
    assertThat(millis.get(millis.size() * 9 / 10)).isLessThan(20L);

    cluster.restart(0);
    long back = System.nanoTime();
    await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(5))
        .until(() -> node.command("PING").handle((reply, failure) -> "PONG".equals(reply)).join());
    // Within the longest wait (1 s) of the port being open again, plus slack for a loaded machine.
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back)).isLessThan(2000L);
  }

  @Test
  void aNodeGivenByHostNameIsResolvedOffTheEventLoop() throws Exception {
    RedisCluster cluster = closeLater(RedisCluster.start(1));
    int port = cluster.node(0).port();
    RedisIo io = closeLater(RedisIo.start(1));
    List<String> lookupThreads = Collections.synchronizedList(new ArrayList<>());
    OffLoopResolver slow = new OffLoopResolver(host -> {
      lookupThreads.add(Thread.currentThread().getName());
      Thread.sleep(300); // a slow DNS server
      return InetAddress.getAllByName(host);
    }, lookups);
    NettyRedisNode node = closeLater(new NettyRedisNode(NodeAddress.parse("redis://localhost:" + port),
        Duration.ofSeconds(2), io, null, slow, RedisConnection.MAX_PENDING));
    CompletableFuture<Object> ping = node.command("PING");
    // While the lookup sleeps, the one loop still runs its other work at once.
    Thread.sleep(50);
    long start = System.nanoTime();
    io.loops().get(0).submit(() -> { }).get(1, TimeUnit.SECONDS);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(100L);
    assertThat(ping.isDone()).isFalse();

    assertThat(ping.get(5, TimeUnit.SECONDS)).isEqualTo("PONG");
    assertThat(lookupThreads).isNotEmpty().noneMatch(name -> name.startsWith("redlockd-io"));

    // And the process-wide resolver, as the server uses it, finds "localhost" too.
    NettyRedisNode named = closeLater(new NettyRedisNode(NodeAddress.parse("redis://localhost:" + port),
        Duration.ofSeconds(2), io, null));
    assertThat(named.command("PING").get(5, TimeUnit.SECONDS)).isEqualTo("PONG");
  }

  @Test
  void callsPastTheBoundOnAStalledConnectionFailAtOnceAndTheRestAreAnsweredWhenItResumes() throws Exception {
    RedisCluster cluster = closeLater(RedisCluster.start(1));
    RedisIo io = closeLater(RedisIo.start(1));
    int bound = 100;
    NettyRedisNode node = closeLater(new NettyRedisNode(NodeAddress.parse(cluster.uris().get(0)),
        Duration.ofSeconds(3), io, null, OffLoopResolver.shared(), bound));
    assertThat(node.command("PING").get(5, TimeUnit.SECONDS)).isEqualTo("PONG");
    cluster.pause(0);
    try {
      List<CompletableFuture<Object>> calls = new ArrayList<>();
      for (int i = 0; i < bound + 50; i++) {
        calls.add(node.command("INCR", "counted"));
      }
      // The refused ones fail without waiting for the node, well inside its 3 s timeout.
      await().atMost(Duration.ofSeconds(1)).until(() -> calls.stream().filter(CompletableFuture::isDone).count() == 50);
      List<CompletableFuture<Object>> refused = calls.subList(bound, calls.size());
      for (CompletableFuture<Object> call : refused) {
        assertThat(failureOf(call)).isInstanceOf(NodeConnectionException.class)
            .hasMessageContaining("not keeping up");
      }
      cluster.resume(0);
      for (CompletableFuture<Object> call : calls.subList(0, bound)) {
        assertThat(call.get(5, TimeUnit.SECONDS)).isInstanceOf(Long.class);
      }
      // Only the accepted calls reached Redis.
      assertThat(cluster.call(0, "GET", "counted")).isEqualTo(Integer.toString(bound));
    } finally {
      cluster.resumeAll();
    }
    assertThat(node.command("PING").get(5, TimeUnit.SECONDS)).isEqualTo("PONG");
  }

  @Test
  void aHungLookupFailsItsCallsAtTheNodeTimeout() throws Exception {
    RedisIo io = closeLater(RedisIo.start(1));
    OffLoopResolver hung = new OffLoopResolver(host -> {
      Thread.sleep(10_000);
      throw new java.net.UnknownHostException(host);
    }, lookups);
    NettyRedisNode node = closeLater(new NettyRedisNode(NodeAddress.parse("redis://nowhere.invalid:6379"),
        Duration.ofMillis(200), io, null, hung, RedisConnection.MAX_PENDING));
    long start = System.nanoTime();
    assertThat(failureOf(node.command("PING"))).isInstanceOf(TimeoutException.class);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(150L, 1000L);
  }
}
