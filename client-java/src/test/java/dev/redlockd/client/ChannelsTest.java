package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Rule 16: one channel over several replicas (two fake servers on loopback sharing their
 * locks, as two redlockd replicas share Redis), round_robin over them, and a kept stream that
 * resumes on the other replica when its own one stops.
 */
class ChannelsTest {
  private final FakeLockService first = new FakeLockService();
  private final FakeLockService second = new FakeLockService(first);
  private final List<Server> servers = new CopyOnWriteArrayList<>();
  private ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    servers.add(Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(first).build().start());
    servers.add(Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(second).build().start());
    channel = Channels.forAddresses(List.of("127.0.0.1:" + servers.get(0).getPort(),
        "localhost:" + servers.get(1).getPort()), InsecureChannelCredentials.create()).build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    for (Server server : servers) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    first.shutdown();
    second.shutdown();
  }

  @Test
  void callsAreSpreadOverEveryReplica() throws Exception {
    LockClient client = LockClient.create(channel);
    // The first calls may all go to the first replica that is up; once both are, they alternate.
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    int calls = 0;
    while (System.nanoTime() < until && (calls(first) < 3 || calls(second) < 3)) {
      client.acquire("orders/" + calls, LockOptions.ttl(Duration.ofSeconds(10))).release();
      calls += 2;
      Thread.sleep(10);
    }
    assertThat(calls(first)).isGreaterThanOrEqualTo(3);
    assertThat(calls(second)).isGreaterThanOrEqualTo(3);
    assertThat(calls(first) + calls(second)).isEqualTo(calls);
  }

  private static int calls(FakeLockService replica) {
    return replica.acquires.size() + replica.releases.get();
  }

  @Test
  void aKeptLeaseResumesOnTheOtherReplicaWhenItsOwnStops() throws Exception {
    LockClient client = LockClient.builder(channel).callTimeout(Duration.ofSeconds(2)).build();
    Lease lease = client.acquire("orders/1", LockOptions.ttl(Duration.ofSeconds(2))).keepAlive();
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    lease.onLost(heard::add);
    await().atMost(Duration.ofSeconds(5)).until(() -> first.keepAliveRequests.get() + second.keepAliveRequests.get() > 0);
    boolean onFirst = !first.keepAliveFirsts.isEmpty();
    FakeLockService used = onFirst ? first : second;
    FakeLockService other = onFirst ? second : first;
    String token = used.keepAliveFirsts.get(0).getToken();
    long fence = lease.fencingToken();

    servers.get(onFirst ? 0 : 1).shutdownNow().awaitTermination(5, TimeUnit.SECONDS);

    await().atMost(Duration.ofSeconds(5)).until(() -> other.keepAliveRequests.get() > 0);
    assertThat(other.keepAliveFirsts.get(0).getToken()).isEqualTo(token);
    long deadline = lease.deadlineNanos();
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.deadlineNanos() > deadline);
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.fencingToken()).isEqualTo(fence).isEqualTo(first.locks.get("orders/1").fence());
    assertThat(heard).isEmpty();
    assertThat(lease.release()).isTrue();
    assertThat(first.locks).isEmpty();
  }

  @Test
  void theTargetNamesEveryAddressAndRefusesMalformedOnes() {
    assertThat(Channels.target(List.of("10.0.0.1:50051", "[::1]:50052", "redlockd-2.internal:50053")))
        .isEqualTo("redlockd-static:///10.0.0.1:50051,%5B::1%5D:50052,redlockd-2.internal:50053");
    assertThat(Channels.split(" a:1, b:2 ,")).containsExactly("a:1", "b:2");
    assertThatThrownBy(() -> Channels.target(List.of())).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Channels.target(List.of("host:port"))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Channels.target(List.of("::1:50051"))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Channels.target(List.of("h:70000"))).isInstanceOf(IllegalArgumentException.class);
  }
}
