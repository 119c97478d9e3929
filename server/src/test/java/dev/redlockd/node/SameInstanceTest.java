package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Relay;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One Redis instance reached through two node entries must never serve both. */
class SameInstanceTest {
  /**
   * A bound on a failure, not a speed: each node's first call connects, logs in and reads the run
   * id, which took over 250 ms on a busy machine (the server module's tests run in two JVMs).
   */
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private static NettyRedisNode node(String uri, InstanceIds identities) {
    return new NettyRedisNode(NodeAddress.parse(uri), TIMEOUT, RedisIo.shared(), null, identities);
  }

  private static Throwable failure(NettyRedisNode node) {
    return node.command("PING").handle((reply, failure) -> failure).join();
  }

  private static boolean sameInstance(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SameInstanceException) {
        return true;
      }
    }
    return false;
  }

  @Test
  void anInstanceReachedThroughTwoAddressesServesOnlyTheEntryThatReachedItFirst() {
    try (RedisCluster cluster = RedisCluster.start(1)) {
      cluster.call(0, "CONFIG", "SET", "bind", "127.0.0.1 127.0.0.2");
      int port = cluster.node(0).port();
      InstanceIds identities = new InstanceIds();
      try (NettyRedisNode first = node("redis://127.0.0.1:" + port, identities)) {
        assertThat(failure(first)).isNull();
        try (NettyRedisNode second = node("redis://127.0.0.2:" + port, identities)) {
          Throwable refused = failure(second);
          assertThat(sameInstance(refused)).as(String.valueOf(refused)).isTrue();
          assertThat(refused).hasStackTraceContaining("redis://127.0.0.1:" + port)
              .hasStackTraceContaining("redis://127.0.0.2:" + port);
          // and it stays refused: every reconnect reads the run_id again
          for (int i = 0; i < 5; i++) {
            assertThat(failure(second)).isNotNull();
          }
          assertThat(failure(first)).isNull();
          DistinctInstances.check(List.of(first));
          assertThatThrownBy(() -> DistinctInstances.check(List.of(first, second)))
              .isInstanceOf(SameInstanceException.class);
        }
      }
    }
  }

  @Test
  void anEntryThatLaterReachesAnotherEntrysInstanceStopsServingUntilItReachesOneOfItsOwn() {
    try (RedisCluster cluster = RedisCluster.start(2);
        Relay relay = new Relay(cluster.node(1).port())) {
      InstanceIds identities = new InstanceIds();
      try (NettyRedisNode a = node(cluster.uris().get(0), identities);
          NettyRedisNode b = node("redis://127.0.0.1:" + relay.port(), identities)) {
        assertThat(failure(a)).isNull();
        assertThat(failure(b)).isNull();
        DistinctInstances.check(List.of(a, b));

        // b's address now leads to a's instance (a NAT rule or a DNS name changed)
        relay.retarget(cluster.node(0).port());
        await().atMost(Duration.ofSeconds(10)).until(() -> sameInstance(failure(b)));
        for (int i = 0; i < 20; i++) {
          Throwable failure = failure(b);
          assertThat(failure).as("b never answers while it reaches a's instance").isNotNull();
        }
        assertThat(failure(a)).isNull();

        relay.retarget(cluster.node(1).port());
        await().atMost(Duration.ofSeconds(10)).until(() -> failure(b) == null);
        assertThat(failure(a)).isNull();
      }
    }
  }

  @Test
  void entriesThatResolveToOneAddressAndPortAreRefusedBeforeAnyConnection() throws Exception {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    Map<String, InetAddress[]> dns = Map.of(
        "localhost", new InetAddress[] {loopback},
        "127.0.0.1", new InetAddress[] {loopback},
        "other", new InetAddress[] {InetAddress.getByName("10.0.0.9")});
    OffLoopResolver.Lookup lookup = host -> {
      InetAddress[] found = dns.get(host);
      if (found == null) {
        throw new java.net.UnknownHostException(host);
      }
      return found;
    };
    List<NodeAddress> twice = NodeAddress.parseList("redis://localhost:16391,redis://other:16391,redis://127.0.0.1:16391");
    assertThatThrownBy(() -> DistinctEndpoints.check(twice, lookup, Duration.ofSeconds(2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--redis names one Redis node twice: redis://localhost:16391 and redis://127.0.0.1:16391 both "
            + "reach 127.0.0.1:16391; one node must not vote twice");
    // other ports, and a name that does not resolve (left to the run_id check), pass
    DistinctEndpoints.check(NodeAddress.parseList("redis://localhost:16391,redis://127.0.0.1:16392,redis://nowhere:16391"),
        lookup, Duration.ofSeconds(2));
  }
}
