package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.inprocess.InProcessSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two replicas behind one round_robin channel, one of which goes silent with its connection
 * open: round_robin still counts it ready, and hands the streams it is asked for to the replicas
 * in turn. A stream that replaces a silent one and reached the silent replica again is held to a
 * third of the silence bound, and replaced at once by one that reaches the other replica.
 */
class SilentReplicaTest {
  private static final String SCHEME = "silent-replica-test";
  private static final Duration TTL = Duration.ofSeconds(4);
  private static final Duration QUARTER = TTL.dividedBy(4);
  private static final Duration THIRD = QUARTER.dividedBy(RenewalStream.REPLACEMENT_DIVISOR);

  private final FakeLockService first = new FakeLockService();
  private final FakeLockService second = new FakeLockService(first);
  private final ManualTimers timers = new ManualTimers();
  private Server one;
  private Server two;
  private ManagedChannel inProcess;
  private CountingChannel channel;
  private LockClient client;

  @BeforeEach
  void start() throws Exception {
    String a = InProcessServerBuilder.generateName();
    String b = InProcessServerBuilder.generateName();
    one = InProcessServerBuilder.forName(a).addService(first).build().start();
    two = InProcessServerBuilder.forName(b).addService(second).build().start();
    register();
    inProcess = InProcessChannelBuilder.forTarget(SCHEME + ":///" + a + "," + b)
        .defaultLoadBalancingPolicy("round_robin").build();
    channel = new CountingChannel(inProcess);
    client = LockClient.builder(channel).nanoClock(timers::nanoTime).scheduler(timers).build();
    first.validity = TTL;
  }

  @AfterEach
  void stop() throws Exception {
    inProcess.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    one.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    two.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    first.shutdown();
    second.shutdown();
  }

  /** Which replica served the last Acquire. */
  private FakeLockService lastAcquireServedBy(int firstBefore, int secondBefore) {
    return first.acquires.size() > firstBefore ? first : second;
  }

  @Test
  void aReplacementThatReachedTheSilentReplicaMovesOnAfterAThirdOfTheBound() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL)).keepAlive();
    await().atMost(Duration.ofSeconds(5)).until(() -> first.streams.size() + second.streams.size() == 1);
    FakeLockService silent = first.streams.isEmpty() ? second : first;
    FakeLockService other = silent == first ? second : first;
    silent.keepAliveSilent = true;
    // Unary calls take turns too: place them so that the next stream goes to the silent replica.
    FakeLockService served;
    do {
      int before1 = first.acquires.size();
      int before2 = second.acquires.size();
      client.acquire("orders/other-" + first.acquires.size() + second.acquires.size(), LockOptions.ttl(TTL));
      served = lastAcquireServedBy(before1, before2);
    } while (served != other);

    timers.advance(QUARTER.multipliedBy(2)); // a request unanswered for a quarter of the ttl
    assertThat(channel.calls("KeepAlive")).isEqualTo(2);
    await().atMost(Duration.ofSeconds(5)).until(() -> silent.keepAliveFirsts.size() == 2);
    timers.advance(THIRD);
    assertThat(channel.calls("KeepAlive")).as("the replacement on the silent replica, replaced at once").isEqualTo(3);

    await().atMost(Duration.ofSeconds(5)).until(() -> other.keepAliveFirsts.size() == 1);
    assertThat(other.keepAliveFirsts.get(0).getToken()).isEqualTo(silent.keepAliveFirsts.get(0).getToken());
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.deadlineNanos() > timers.nanoTime());
    await().atMost(Duration.ofSeconds(5)).until(() -> silent.cancelled.size() == 2);
    assertThat(silent.halfClosed).as("the silent replica released nothing").isEmpty();
    assertThat(lease.isValid()).isTrue();
  }

  private static synchronized void register() {
    NameResolverRegistry registry = NameResolverRegistry.getDefaultRegistry();
    if (registry.getProviderForScheme(SCHEME) == null) {
      registry.register(new Replicas());
    }
  }

  /** Resolves {@code silent-replica-test:///name1,name2} to those in-process servers. */
  private static final class Replicas extends NameResolverProvider {
    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
      if (!SCHEME.equals(target.getScheme())) {
        return null;
      }
      List<SocketAddress> names = java.util.Arrays.stream(target.getPath().substring(1).split(","))
          .<SocketAddress>map(InProcessSocketAddress::new).toList();
      return new NameResolver() {
        @Override
        public String getServiceAuthority() {
          return "replicas";
        }

        @Override
        public void start(Listener2 listener) {
          listener.onResult(ResolutionResult.newBuilder()
              .setAddresses(names.stream().map(io.grpc.EquivalentAddressGroup::new).toList()).build());
        }

        @Override
        public void shutdown() {}
      };
    }

    @Override
    public String getDefaultScheme() {
      return SCHEME;
    }

    @Override
    protected boolean isAvailable() {
      return true;
    }

    @Override
    public java.util.Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
      return List.of(InProcessSocketAddress.class);
    }

    @Override
    protected int priority() {
      return 5;
    }
  }
}
