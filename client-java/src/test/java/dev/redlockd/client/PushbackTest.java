package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Rule 17: a server's early refusal (UNAVAILABLE with {@code grpc-retry-pushback-ms}) is waited
 * out, at least the pushback and with jitter, by unary retries and by stream reopens alike; "do
 * not retry" stops at once; a kept lease is still lost at its guarded deadline while it waits.
 */
class PushbackTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration WAIT_LONG = Duration.ofSeconds(10);

  private final FakeLockService fake = new FakeLockService();
  private final FakeElectionService elections = new FakeElectionService();
  private Server server;
  private ManagedChannel channel;
  private LockClient client;

  /** A client whose own backoff (10 ms doubling to 40 ms) is far below the pushbacks used here. */
  private void start(RefusingInterceptor refusing) throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name)
        .addService(ServerInterceptors.intercept(fake, refusing))
        .addService(ServerInterceptors.intercept(elections, refusing))
        .build().start();
    channel = InProcessChannelBuilder.forName(name).build();
    client = LockClient.builder(channel)
        .callTimeout(Duration.ofSeconds(2))
        .retryPolicy(RetryPolicy.defaults()
                .withMaxAttempts(5).withInitialBackoff(Duration.ofMillis(10)).withMaxBackoff(Duration.ofMillis(40)))
        .build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    fake.shutdown();
  }

  private static void assertWaitedAtLeastWithJitter(List<Double> gapsMs, int count, double pushbackMs) {
    assertThat(gapsMs).hasSize(count);
    // Each gap is the client's wait plus a little transport time; the wait is at least the pushback.
    assertThat(gapsMs).allSatisfy(gap -> assertThat(gap).isGreaterThanOrEqualTo(pushbackMs));
    assertThat(new HashSet<>(gapsMs)).as("jittered waits, not all equal").hasSizeGreaterThan(1);
  }

  @Test
  void anAcquireRefusedWithPushbackWaitsAtLeastItWithJitterAndKeepsItsToken() throws Exception {
    RefusingInterceptor refusing = new RefusingInterceptor(LockServiceGrpc.getAcquireMethod().getFullMethodName(), 3, "150");
    start(refusing);

    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL).waitUpTo(Duration.ofSeconds(5)));

    assertWaitedAtLeastWithJitter(refusing.gapsMs(), 3, 150);
    assertThat(refusing.refused).hasSize(3);
    String token = fake.acquires.get(0).getToken();
    assertThat(refusing.refused).allSatisfy(r -> assertThat(((AcquireRequest) r).getToken()).isEqualTo(token));
    assertThat(fake.locks.get("orders/1").token()).isEqualTo(token);
    // The waits came out of the Acquire's wait: the retry sent what was left of it.
    assertThat(ProtoTime.fromProto(fake.acquires.get(0).getWait())).isLessThan(Duration.ofMillis(5000 - 450));
    assertThat(lease.isValid()).isTrue();
  }

  @Test
  void doNotRetryEndsAnAcquireAtOnceWithUnavailableAndGivesTheTokenBack() throws Exception {
    RefusingInterceptor refusing = new RefusingInterceptor(LockServiceGrpc.getAcquireMethod().getFullMethodName(), 5, "-1");
    start(refusing);

    LockServiceException e = catchThrowableOfType(() -> client.acquire("orders/1",
        LockOptions.ttl(TTL).waitUpTo(Duration.ofSeconds(5))),
        LockServiceException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(refusing.arrivals).hasSize(1);
    await().atMost(WAIT_LONG).until(() -> fake.releases.get() == 1);
  }

  @Test
  void anUnparsablePushbackIsDoNotRetryToo() throws Exception {
    RefusingInterceptor refusing = new RefusingInterceptor(LockServiceGrpc.getReleaseMethod().getFullMethodName(), 5, "soon");
    start(refusing);
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));

    LockServiceException e = catchThrowableOfType(lease::release, LockServiceException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(refusing.arrivals).hasSize(1);
  }

  @Test
  void aUnaryCallRefusedWithPushbackWaitsAtLeastIt() throws Exception {
    RefusingInterceptor refusing = new RefusingInterceptor(LockServiceGrpc.getExtendMethod().getFullMethodName(), 2, "120");
    start(refusing);
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));

    lease.extend(Duration.ofSeconds(20));

    assertWaitedAtLeastWithJitter(refusing.gapsMs(), 2, 120);
    assertThat(fake.extendCalls.get()).isEqualTo(1);
  }

  @Test
  void aKeptStreamRefusedWithPushbackReopensAfterItWithTheSameTokenAndNoLoss() throws Exception {
    RefusingInterceptor refusing = new RefusingInterceptor(LockServiceGrpc.getKeepAliveMethod().getFullMethodName(), 3, "150");
    start(refusing);
    fake.validity = Duration.ofSeconds(3);
    Lease lease = client.acquire("orders/1", LockOptions.ttl(Duration.ofSeconds(3)));
    String token = fake.acquires.get(0).getToken();
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    lease.onLost(heard::add).keepAlive();

    await().atMost(WAIT_LONG).until(() -> fake.keepAliveFirsts.size() == 1);

    assertWaitedAtLeastWithJitter(refusing.gapsMs(), 3, 150);
    assertThat(refusing.refused).allSatisfy(r -> assertThat(((KeepAliveRequest) r).getToken()).isEqualTo(token));
    assertThat(fake.keepAliveFirsts.get(0).getToken()).isEqualTo(token);
    await().atMost(WAIT_LONG).until(() -> fake.keepAliveRequests.get() >= 1);
    assertThat(lease.isValid()).isTrue();
    assertThat(heard).isEmpty();
  }

  @Test
  void aKeptLeaseWhoseGuardedDeadlinePassesDuringAPushbackIsLost() throws Exception {
    RefusingInterceptor refusing = new RefusingInterceptor(LockServiceGrpc.getKeepAliveMethod().getFullMethodName(), 100, "5000");
    start(refusing);
    fake.validity = Duration.ofMillis(800);
    Lease lease = client.acquire("orders/1", LockOptions.ttl(Duration.ofMillis(800)));
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    long[] lostAt = new long[1];
    lease.onLost(e -> {
      lostAt[0] = System.nanoTime();
      heard.add(e);
    }).keepAlive();
    long deadline = lease.deadlineNanos();

    await().atMost(WAIT_LONG).until(() -> !heard.isEmpty());

    assertThat(lease.isValid()).isFalse();
    // At the guarded deadline (the loss timer's own lateness aside), not after the pushback.
    assertThat(lostAt[0]).isLessThan(deadline + TimeUnit.SECONDS.toNanos(1));
    assertThat(heard.get(0).status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(heard).hasSize(1);
    // The stream opened once and waited out the pushback; the only other stream is the
    // half-close that gives the lease back after the loss.
    Thread.sleep(300);
    assertThat(refusing.arrivals).as("waiting the pushback, not reopening").hasSize(2);
  }

  @Test
  void doNotRetryOnAKeptStreamIsALossWithUnavailable() throws Exception {
    RefusingInterceptor refusing = new RefusingInterceptor(LockServiceGrpc.getKeepAliveMethod().getFullMethodName(), 1, "-1");
    start(refusing);
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    lease.onLost(heard::add).keepAlive();

    await().atMost(WAIT_LONG).until(() -> !heard.isEmpty());

    assertThat(heard.get(0).status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(lease.isValid()).isFalse();
    // Given back by a Release: there is no stream left to half-close.
    await().atMost(WAIT_LONG).until(() -> !fake.locks.containsKey("orders/1"));
  }

  @Test
  void aCampaignRefusedWithPushbackCampaignsAgainAfterItWithTheSameToken() throws Exception {
    RefusingInterceptor refusing = new RefusingInterceptor(ElectionServiceGrpc.getCampaignMethod().getFullMethodName(), 2, "150");
    start(refusing);

    CompletableFuture<Leadership> campaign = CompletableFuture.supplyAsync(
        () -> client.campaign("jobs", CampaignOptions.value("a").ttl(Duration.ofSeconds(3))));
    await().atMost(WAIT_LONG).until(() -> elections.candidates.size() == 1
        && !elections.candidates.get(0).requests.isEmpty());
    elections.candidates.get(0).lead(7);
    Leadership leading = campaign.get(10, TimeUnit.SECONDS);

    assertThat(leading.term()).isEqualTo(7);
    assertWaitedAtLeastWithJitter(refusing.gapsMs(), 2, 150);
    String token = elections.candidates.get(0).requests.get(0).getToken();
    assertThat(refusing.refused).allSatisfy(r -> assertThat(((CampaignRequest) r).getToken()).isEqualTo(token));
    assertThat(leading.resign()).isTrue();
  }

  @Test
  void anObserveReopenWaitsAtLeastThePushback() throws Exception {
    RefusingInterceptor refusing = new RefusingInterceptor(ElectionServiceGrpc.getObserveMethod().getFullMethodName(), 2, "150");
    start(refusing);
    List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();

    try (Observation observation = client.observe("jobs", seen::add)) {
      await().atMost(WAIT_LONG).until(() -> elections.observers.size() == 1);
      assertWaitedAtLeastWithJitter(refusing.gapsMs(), 2, 150);
    }
  }
}
