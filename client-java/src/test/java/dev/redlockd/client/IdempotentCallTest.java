package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Release, Extend, Leader and Acquire, and the Release a client sends to give a lease back, are
 * retried on UNAVAILABLE (a replica going away while another is up) until the call's deadline,
 * not for the retry policy's attempts, each retry after resetting the channel's reconnect backoff:
 * on the channel given to the client, or on the one named for it under an intercepted channel.
 */
class IdempotentCallTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
  /** Two attempts, then UNAVAILABLE is retried every 5 ms at most until the call timeout. */
  private static final RetryPolicy TWO_ATTEMPTS = RetryPolicy.defaults()
          .withMaxAttempts(2).withInitialBackoff(Duration.ofMillis(1)).withMaxBackoff(Duration.ofMillis(5));
  private static final Status GOING_AWAY = Status.UNAVAILABLE.withDescription("the replica is shutting down");

  private final FakeLockService fake = new FakeLockService();
  private Server server;
  private ManagedChannel inProcess;
  private CountingChannel channel;

  @BeforeEach
  void start() throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(fake).build().start();
    inProcess = InProcessChannelBuilder.forName(name).build();
    channel = new CountingChannel(inProcess);
  }

  @AfterEach
  void stop() throws Exception {
    inProcess.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    fake.shutdown();
  }

  private LockClient.Builder builder(Channel over) {
    return LockClient.builder(over).callTimeout(CALL_TIMEOUT).retryPolicy(TWO_ATTEMPTS);
  }

  private void failReleases(int n) {
    for (int i = 0; i < n; i++) {
      fake.failNextRelease.add(GOING_AWAY);
    }
  }

  @Test
  void releaseIsRetriedPastThePolicysAttemptsAndResetsTheReconnectBackoffBeforeEachRetry() {
    LockClient client = builder(channel).build();
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    failReleases(6);

    assertThat(lease.release()).isTrue();

    assertThat(fake.releaseLog).hasSize(7).extracting(ReleaseRequest::getToken).containsOnly(
        fake.acquires.get(0).getToken());
    assertThat(channel.backoffResets.get()).isEqualTo(6);
  }

  @Test
  void unavailableIsRetriedNoLongerThanTheCallsDeadline() {
    LockClient client = builder(channel).build();
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    failReleases(100_000);

    long start = System.nanoTime();
    LockServiceException e = catchThrowableOfType(lease::release, LockServiceException.class);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    // No retry starts after the call timeout; the last one takes a few ms with this fake.
    assertThat(tookMs).isBetween(CALL_TIMEOUT.toMillis() - 10, CALL_TIMEOUT.toMillis() + 1000);
    assertThat(fake.releaseLog.size()).isGreaterThan(2);
  }

  @Test
  void anAttemptASilentReplicaNeverAnswersIsRetriedWithinTheCallTimeout() {
    LockClient client = builder(channel).build();
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    fake.silentReleases.set(1);

    long start = System.nanoTime();
    assertThat(lease.release()).isTrue();
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    // The first attempt had half the call timeout; the retry (round_robin's next replica, here
    // the same fake) was answered.
    assertThat(tookMs).isLessThan(CALL_TIMEOUT.toMillis());
    assertThat(fake.releaseLog).hasSize(2).extracting(ReleaseRequest::getToken).containsOnly(
        fake.acquires.get(0).getToken());
  }

  @Test
  void aRetryPolicyOfOneAttemptRetriesNothing() {
    LockClient client = builder(channel).retryPolicy(RetryPolicy.none()).build();
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    failReleases(1);

    LockServiceException e = catchThrowableOfType(lease::release, LockServiceException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(fake.releaseLog).hasSize(1);
  }

  @Test
  void underAnInterceptedChannelTheManagedOneNamedForItHasItsBackoffReset() {
    ClientInterceptor passThrough = new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return next.newCall(method, options);
      }
    };
    Channel intercepted = ClientInterceptors.intercept(channel, passThrough);
    LockClient client = builder(intercepted).resetBackoffOn(channel).build();
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    failReleases(2);

    assertThat(lease.release()).isTrue();
    assertThat(channel.backoffResets.get()).isEqualTo(2);
  }

  @Test
  void extendAndLeaderAreRetriedToo() throws Exception {
    LockClient client = builder(channel).build();
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    for (int i = 0; i < 4; i++) {
      fake.failNextExtend.add(GOING_AWAY);
    }
    lease.extend(Duration.ofSeconds(20));
    assertThat(fake.extendLog).hasSize(5);

    try (FakeElectionServer elections = FakeElectionServer.start()) {
      for (int i = 0; i < 4; i++) {
        elections.fake.failNextLeader.add(GOING_AWAY);
      }
      assertThat(elections.client.leader("scheduler")).isEmpty();
      assertThat(elections.fake.failNextLeader).isEmpty();
    }
  }

  /**
   * Rule 2: an Acquire's UNAVAILABLE is bounded by its deadline, and the policy's attempts count
   * only its DEADLINE_EXCEEDED (each of which has a timeout of its own).
   */
  @Test
  void theAttemptsOfAnAcquireCountOnlyItsTimeouts() {
    LockClient client = builder(channel).build();
    fake.failNextAcquire.addAll(java.util.List.of(GOING_AWAY, GOING_AWAY, Status.DEADLINE_EXCEEDED, GOING_AWAY));
    client.acquire("orders/1", LockOptions.ttl(TTL));
    assertThat(fake.acquires).as("two attempts, but only one of the four failures timed out").hasSize(5);
    assertThat(fake.acquires).extracting(a -> a.getToken()).containsOnly(fake.acquires.get(0).getToken());

    fake.failNextAcquire.addAll(java.util.List.of(Status.DEADLINE_EXCEEDED, GOING_AWAY, Status.DEADLINE_EXCEEDED));
    LockServiceException e = catchThrowableOfType(
        () -> client.acquire("orders/2", LockOptions.ttl(TTL)), LockServiceException.class);
    assertThat(e.status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(fake.acquires).hasSize(8);
  }

  /** Rule 7: the Release that gives a lost lease back goes through the same retries. */
  @Test
  void theReleaseThatGivesALostLeaseBackIsRetriedOnUnavailable() {
    ManualTimers timers = new ManualTimers();
    LockClient client = builder(channel).nanoClock(timers::nanoTime).scheduler(timers).build();
    fake.validity = Duration.ofSeconds(1);
    Lease lease = client.acquire("orders/1", LockOptions.ttl(Duration.ofSeconds(1)));
    failReleases(2);

    timers.advance(Duration.ofSeconds(1)); // past its guarded deadline, unrenewed: lost, and given back
    assertThat(lease.isValid()).isFalse();
    // Each retry waits its backoff on the client's timers: move them until the next one is sent.
    await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5)).until(() -> {
      timers.advance(Duration.ofMillis(1));
      return fake.releaseLog.size() == 3;
    });
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.locks.isEmpty());
    assertThat(channel.backoffResets.get()).isEqualTo(2);

    // Given back already: release sends nothing more, and waits for nothing (no quorum may answer).
    failReleases(100_000);
    assertThat(lease.release()).isFalse();
    assertThat(fake.releaseLog).hasSize(3);
  }
}
