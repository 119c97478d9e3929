package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The client's API over an in-process server with a scripted fake service: every way a call
 * can end, retries, deadlines and lost leases. Lock safety itself is tested end to end against
 * the real server and real Redis (integration-tests).
 *
 * <p>Its tests run side by side (each has its own in-process server and fake service): most of
 * their time is spent waiting on the client's real timers, which the injected nano clock does
 * not drive.
 */
@Execution(ExecutionMode.CONCURRENT)
class LockClientTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  /**
   * A bound on a failure, not a speed: three in-process attempts and their backoffs must fit in
   * it. At 400 ms they did not, at load 14 on 2 cores (the call ran out before its third attempt).
   */
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);

  private final FakeLockService fake = new FakeLockService();
  private final AtomicLong clock = new AtomicLong(1_000_000_000L);
  private Server server;
  private ManagedChannel channel;
  private LockClient client;

  @BeforeEach
  void start() throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(fake).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
    client = builder().build();
  }

  private LockClient.Builder builder() {
    return LockClient.builder(channel)
        .callTimeout(CALL_TIMEOUT)
        .retryPolicy(RetryPolicy.defaults()
                .withMaxAttempts(3).withInitialBackoff(Duration.ofMillis(10)).withMaxBackoff(Duration.ofMillis(40)));
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    fake.shutdown();
  }

  private String tokenOfLastAcquire() {
    return fake.acquires.get(fake.acquires.size() - 1).getToken();
  }

  @Test
  void acquireSendsAFreshTokenAndReturnsTheLease() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));

    assertThat(lease.resource()).isEqualTo("orders/1");
    assertThat(lease.fencingToken()).isEqualTo(fake.locks.get("orders/1").fence());
    assertThat(tokenOfLastAcquire()).hasSize(32).matches("[A-Za-z0-9_-]+");
    assertThat(fake.locks.get("orders/1").token()).isEqualTo(tokenOfLastAcquire());
    AcquireRequest sent = fake.acquires.get(0);
    assertThat(ProtoTime.fromProto(sent.getTtl())).isEqualTo(TTL);
    assertThat(sent.getOwner()).contains("pid");

    client.acquire("orders/2", LockOptions.ttl(TTL));
    assertThat(fake.acquires.get(1).getToken()).isNotEqualTo(fake.acquires.get(0).getToken());
  }

  @Test
  void theOptionsSendTheirTtlWaitAndOwnerAndDefaultToTheBuildersTtlAndOwner() {
    client.acquire("orders/1", LockOptions.ttl(Duration.ofSeconds(7)).waitUpTo(Duration.ofMillis(300)).owner("batch-7"));
    AcquireRequest named = fake.acquires.get(0);
    assertThat(ProtoTime.fromProto(named.getTtl())).isEqualTo(Duration.ofSeconds(7));
    assertThat(ProtoTime.fromProto(named.getWait())).isPositive().isLessThanOrEqualTo(Duration.ofMillis(300));
    assertThat(named.getOwner()).isEqualTo("batch-7");

    LockClient defaults = builder().defaultTtl(Duration.ofSeconds(12)).owner("scheduler").build();
    defaults.acquire("orders/2", LockOptions.defaultTtl());
    AcquireRequest unnamed = fake.acquires.get(1);
    assertThat(ProtoTime.fromProto(unnamed.getTtl())).isEqualTo(Duration.ofSeconds(12));
    assertThat(ProtoTime.fromProto(unnamed.getWait())).isZero();
    assertThat(unnamed.getOwner()).isEqualTo("scheduler");
  }

  @Test
  void theKeepAliveOptionHandsOutALeaseAlreadyKeptOnItsStream() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL).keepAlive());

    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveFirsts.size() == 1);
    assertThat(fake.keepAliveFirsts.get(0).getToken()).isEqualTo(tokenOfLastAcquire());
    lease.close();
  }

  @Test
  void tryAcquireSendsTheOptionsWaitAndIsEmptyWhenStillHeld() {
    client.acquire("orders/1", LockOptions.ttl(TTL)); // someone else's, for the next acquire's fresh token

    assertThat(client.tryAcquire("orders/1", LockOptions.ttl(TTL).waitUpTo(Duration.ofMillis(200)))).isEmpty();
    assertThat(ProtoTime.fromProto(fake.acquires.get(1).getWait())).isPositive()
        .isLessThanOrEqualTo(Duration.ofMillis(200));
  }

  @Test
  void localDeadlineIsSendTimePlusValidityOnTheInjectedClock() {
    fake.validity = Duration.ofMillis(9_700);
    LockClient timed = builder().nanoClock(clock::get).build();

    long sent = clock.get();
    Lease lease = timed.acquire("orders/1", LockOptions.ttl(TTL));
    assertThat(lease.deadlineNanos()).isEqualTo(sent + Duration.ofMillis(9_700).toNanos());
    // Valid until the guard before the deadline: ttl/20 = 500 ms, at most 100 ms.
    assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(9_600));
    assertThat(lease.isValid()).isTrue();

    clock.addAndGet(Duration.ofMillis(9_599).toNanos());
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(1));

    clock.addAndGet(Duration.ofMillis(1).toNanos());
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.remaining()).isZero();
  }

  @Test
  void theGuardIsATwentiethOfTheTtlAndAtMost100Ms() {
    assertThat(Lease.guard(Duration.ofMillis(400))).isEqualTo(Duration.ofMillis(20));
    assertThat(Lease.guard(Duration.ofSeconds(2))).isEqualTo(Duration.ofMillis(100));
    assertThat(Lease.guard(Duration.ofHours(1))).isEqualTo(Duration.ofMillis(100));
  }

  /** The loss is reported before the deadline passes, not when a timer gets round to it after. */
  @Test
  void aLeaseNotRenewedIsReportedLostBeforeItsDeadline() throws Exception {
    fake.validity = Duration.ofMillis(600);
    Lease lease = client.acquire("orders/1", LockOptions.ttl(Duration.ofMillis(600)));
    long deadline = lease.deadlineNanos();
    CompletableFuture<Long> lostAt = new CompletableFuture<>();
    lease.onLost(e -> lostAt.complete(System.nanoTime()));

    long at = lostAt.get(5, TimeUnit.SECONDS);
    assertThat(at).as("lost %d ms before the deadline", TimeUnit.NANOSECONDS.toMillis(deadline - at))
        .isLessThan(deadline);
    assertThat(lease.isValid()).isFalse();
  }

  @Test
  void acquireThrowsLockNotAcquiredWhenHeldBySomeoneElse() {
    client.acquire("orders/1", LockOptions.ttl(TTL));

    LockNotAcquiredException e = catchThrowableOfType(
        () -> client.acquire("orders/1",
            LockOptions.ttl(TTL).waitUpTo(Duration.ofMillis(50))), LockNotAcquiredException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.ABORTED);
    assertThat(e).hasMessageContaining("orders/1");
  }

  @Test
  void tryAcquireIsOneAttemptAndEmptyWhenHeld() {
    Optional<Lease> first = client.tryAcquire("orders/1", LockOptions.ttl(TTL));
    Optional<Lease> second = client.tryAcquire("orders/1", LockOptions.ttl(TTL));

    assertThat(first).isPresent();
    assertThat(second).isEmpty();
    assertThat(fake.acquires).hasSize(2);
    assertThat(fake.acquires.get(1).getWait().getSeconds()).isZero();
    assertThat(fake.acquires.get(1).getWait().getNanos()).isZero();
  }

  @Test
  void nonRetriableFailuresSurfaceAsLockServiceExceptionWithTheirStatus() {
    for (Status.Code code : new Status.Code[] {
        Status.Code.INVALID_ARGUMENT, Status.Code.RESOURCE_EXHAUSTED, Status.Code.INTERNAL}) {
      fake.failNextAcquire.add(Status.fromCode(code).withDescription("resource 'orders/1': " + code));

      LockServiceException e = catchThrowableOfType(
          () -> client.acquire("orders/1", LockOptions.ttl(TTL)), LockServiceException.class);

      assertThat(e).isNotInstanceOf(LockNotAcquiredException.class);
      assertThat(e.status().getCode()).isEqualTo(code);
      assertThat(e).hasMessageContaining("orders/1");
    }
    assertThat(fake.acquires).hasSize(3); // none of them retried
    assertThat(fake.locks).isEmpty();
  }

  @Test
  void unavailableIsRetriedWithTheSameToken() {
    fake.failNextAcquire.add(Status.UNAVAILABLE.withDescription("2 of 5 nodes answered"));
    fake.failNextAcquire.add(Status.UNAVAILABLE.withDescription("2 of 5 nodes answered"));

    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));

    assertThat(fake.acquires).hasSize(3);
    assertThat(fake.acquires).extracting(AcquireRequest::getToken).containsOnly(tokenOfLastAcquire());
    assertThat(lease.isValid()).isTrue();
  }

  /** Rule 2: UNAVAILABLE goes on being retried past the policy's attempts, until the call's deadline. */
  @Test
  void unavailableUntilTheCallsDeadlineFailsAndReleasesWhatAnAttemptMayHaveTaken() {
    for (int i = 0; i < 1000; i++) {
      fake.failNextAcquire.add(Status.UNAVAILABLE.withDescription("1 of 3 nodes answered"));
    }

    long start = System.nanoTime();
    LockServiceException e = catchThrowableOfType(
        () -> client.acquire("orders/1", LockOptions.ttl(TTL)), LockServiceException.class);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e).hasMessageContaining("1 of 3");
    // The policy's 3 attempts, then every 40 ms (its longest backoff) until the call timeout has passed.
    assertThat(fake.acquires).hasSizeGreaterThan(3);
    assertThat(fake.acquires).extracting(AcquireRequest::getToken).containsOnly(tokenOfLastAcquire());
    assertThat(tookMs).isGreaterThanOrEqualTo(CALL_TIMEOUT.toMillis() - 40);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(2))
        .untilAsserted(() -> assertThat(fake.releases.get()).isEqualTo(1));
  }

  @Test
  void answerLostPastTheDeadlineIsRetriedWithTheSameTokenAndLeavesOneLock() {
    // The first Acquire is granted, but its answer comes after the caller's deadline.
    fake.delayNextAcquireAnswer = CALL_TIMEOUT.multipliedBy(3);

    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));

    assertThat(fake.acquires).hasSize(2);
    assertThat(fake.acquires.get(1).getToken()).isEqualTo(fake.acquires.get(0).getToken());
    assertThat(fake.locks).hasSize(1);
    assertThat(lease.fencingToken()).isEqualTo(fake.locks.get("orders/1").fence());
    // Not blocked on itself, and a release frees the one lock there is.
    assertThat(lease.release()).isTrue();
    assertThat(fake.locks).isEmpty();
  }

  @Test
  void acquireDeadlineIsTheWaitPlusTheCallTimeout() {
    client.acquire("orders/1", LockOptions.ttl(TTL).waitUpTo(Duration.ofSeconds(3)));
    client.acquire("orders/2", LockOptions.ttl(TTL));

    assertThat(fake.acquireDeadlinesMs.get(0)).isBetween(3_000L, 3_000L + CALL_TIMEOUT.toMillis());
    assertThat(fake.acquireDeadlinesMs.get(1)).isBetween(0L, CALL_TIMEOUT.toMillis()).isPositive();
  }

  @Test
  void acquireAsyncCompletesWithTheLeaseOrTheFailure() throws Exception {
    Lease lease = client.acquireAsync("orders/1", LockOptions.ttl(TTL)).get(5, TimeUnit.SECONDS);
    assertThat(lease.isValid()).isTrue();

    CompletableFuture<Lease> held = client.acquireAsync("orders/1", LockOptions.ttl(TTL));
    ExecutionException e = catchThrowableOfType(() -> held.get(5, TimeUnit.SECONDS), ExecutionException.class);
    assertThat(e.getCause()).isInstanceOf(LockNotAcquiredException.class);
  }

  /** Typically a grant after waiting longer than the ttl for another holder. */
  @Test
  void aGrantThatArrivesWithLessThanHalfItsValidityLeftIsRefreshedUnderTheSameToken() {
    fake.validity = Duration.ofSeconds(1);
    fake.delayNextAcquireAnswer = Duration.ofMillis(600);

    Lease lease = client.acquire("orders/1", LockOptions.ttl(Duration.ofSeconds(1)).waitUpTo(Duration.ofSeconds(2)));

    assertThat(lease.remaining()).isGreaterThan(Duration.ofMillis(800));
    assertThat(fake.acquires).hasSize(2);
    assertThat(fake.acquires.get(1).getToken()).isEqualTo(fake.acquires.get(0).getToken());
    assertThat(fake.acquires.get(1).getWait()).isNotEqualTo(fake.acquires.get(0).getWait());
    assertThat(fake.locks).hasSize(1);
  }

  @Test
  void grantsThatKeepRunningOutBeforeTheirAnswerArrivesFailAndAreGivenBack() {
    fake.validity = Duration.ofMillis(300);
    fake.delayEveryAcquireAnswer = Duration.ofMillis(350);

    LockServiceException e = catchThrowableOfType(
        () -> client.acquire("orders/1",
            LockOptions.ttl(Duration.ofMillis(300)).waitUpTo(Duration.ofSeconds(5))), LockServiceException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(fake.acquires).as("the first attempt and three refreshes").hasSize(4);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(2)).until(fake.locks::isEmpty);
  }

  @Test
  void aLeaseGrantedAfterTheCallerCancelledIsReleased() {
    fake.delayNextAcquireAnswer = Duration.ofMillis(200);
    CompletableFuture<Lease> pending = client.acquireAsync("orders/1",
        LockOptions.ttl(TTL).waitUpTo(Duration.ofSeconds(5)));
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(2)).until(() -> !fake.locks.isEmpty());

    pending.cancel(false);

    // The fake grants before answering; the cancelled caller's lock must not leak.
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(3)).until(fake.locks::isEmpty);
    assertThat(client.tryAcquire("orders/1", LockOptions.ttl(TTL))).isPresent();
  }

  @Test
  void extendMovesTheDeadlineWithTheNewValidity() {
    LockClient timed = builder().nanoClock(clock::get).build();
    fake.validity = Duration.ofSeconds(1);
    Lease lease = timed.acquire("orders/1", LockOptions.ttl(TTL));
    clock.addAndGet(Duration.ofMillis(900).toNanos());

    fake.validity = Duration.ofSeconds(20);
    lease.extend(Duration.ofSeconds(20));

    assertThat(lease.remaining()).isEqualTo(Duration.ofSeconds(20).minusMillis(100));
    clock.addAndGet(Duration.ofSeconds(19).toNanos());
    assertThat(lease.isValid()).isTrue();
  }

  @Test
  void extendOfALeaseNoLongerHeldThrowsLeaseLostAndFiresOnLost() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    lease.onLost(heard::set);
    fake.locks.clear(); // expired or taken over behind the client's back

    LeaseLostException e = catchThrowableOfType(() -> lease.extend(TTL), LeaseLostException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(heard.get()).isSameAs(e);
    assertThat(lease.isValid()).isFalse();
  }

  @Test
  void extendRetriesUnavailableWhileTheLeaseIsValid() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    fake.failNextExtend.add(Status.UNAVAILABLE.withDescription("2 of 5 nodes answered"));

    lease.extend(TTL);

    assertThat(fake.failNextExtend).isEmpty();
    assertThat(lease.isValid()).isTrue();
  }

  @Test
  void releaseIsIdempotentAndTrueOnlyOnce() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));

    assertThat(lease.release()).isTrue();
    assertThat(lease.release()).isFalse();
    lease.close();

    assertThat(fake.releases.get()).isEqualTo(1);
    assertThat(lease.isValid()).isFalse();
    assertThat(fake.locks).isEmpty();
  }

  @Test
  void releaseOfALeaseTakenOverSaysFalse() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    fake.locks.clear();

    assertThat(lease.release()).isFalse();
  }

  @Test
  void closeAfterExpiryNeitherThrowsNorBlocks() throws Exception {
    fake.validity = Duration.ofMillis(50);
    CountDownLatch lost = new CountDownLatch(1);
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL)).onLost(e -> {
      heard.set(e);
      lost.countDown();
    });

    assertThat(lost.await(2, TimeUnit.SECONDS)).isTrue();
    assertThat(heard.get().status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.remaining()).isZero();
    // The node copies are gone by now, and the service is unreachable on top of it.
    fake.locks.clear();
    for (int i = 0; i < 3; i++) {
      fake.failNextRelease.add(Status.UNAVAILABLE.withDescription("0 of 3 nodes answered"));
    }
    long start = System.nanoTime();
    lease.close();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
  }

  @Test
  void onLostRegisteredAfterTheLossFiresAtOnce() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    fake.locks.clear();
    assertThatThrownBy(() -> lease.extend(TTL)).isInstanceOf(LeaseLostException.class);

    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    lease.onLost(heard::set);

    assertThat(heard.get()).isNotNull();
  }

  @Test
  void keepAliveMovesTheDeadlineAndReportsTheStreamEndingAsLost() throws Exception {
    // Long enough for the first renewal's answer to come before it runs out, in a JVM taking
    // its first KeepAlive while other modules build beside it (300 ms was not, in a fresh-clone run).
    fake.validity = Duration.ofSeconds(3);
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    fake.validity = Duration.ofSeconds(30);
    CountDownLatch lost = new CountDownLatch(1);
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    lease.onLost(e -> {
      heard.set(e);
      lost.countDown();
    });

    lease.keepAlive();
    // More than 20 s left, of a grant valid for 3 s: the renewal moved the deadline.
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
        .until(() -> lease.remaining().compareTo(Duration.ofSeconds(20)) > 0);
    assertThat(lease.isValid()).isTrue();

    fake.endStreams(Status.NOT_FOUND.withDescription("lease on resource 'orders/1' is not held"));

    assertThat(lost.await(2, TimeUnit.SECONDS)).isTrue();
    assertThat(heard.get().status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(lease.isValid()).isFalse();
  }

  /**
   * The server counts validity from when its renewal finished; an answer that spends longer
   * on its way than the first one did must not push the deadline past the server's.
   */
  @Test
  void keepAliveCountsEachRenewalFromTheSendTimeOfTheRequestItEchoes() throws Exception {
    Duration ttl = Duration.ofSeconds(1);
    fake.validity = ttl;
    Lease lease = client.acquire("orders/1", LockOptions.ttl(ttl));
    // Late, but within a quarter of the ttl (later than that, the stream counts as silent: SilentStreamTest).
    fake.laterKeepAliveAnswerDelay = Duration.ofMillis(150);
    lease.keepAlive();
    Thread.sleep(1_100); // past the deadline of the first answer, which came at once

    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2_000);
    long mostLeftMs = 0;
    while (System.nanoTime() < until) {
      assertThat(lease.isValid()).as("renewed every ttl/4, each answer 150 ms late").isTrue();
      mostLeftMs = Math.max(mostLeftMs, lease.remaining().toMillis());
      Thread.sleep(10);
    }
    // Each answer arrives 150 ms after its request with 1 s of validity: at most 850 ms left, less
    // the 50 ms guard (counted from the answer's arrival it would be 900 ms).
    assertThat(mostLeftMs).isBetween(600L, 800L);
    assertThat(fake.keepAliveRequests.get()).as("a request every 250 ms over 3.1 s").isBetween(10, 15);
    lease.close();
  }

  @Test
  void releaseOfAKeptLeaseHalfClosesItsStream() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL)).keepAlive();
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(2)).until(() -> fake.streams.size() == 1);
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    lease.onLost(heard::set);

    assertThat(lease.release()).isTrue();

    assertThat(fake.locks).isEmpty();
    assertThat(fake.streams).isEmpty();
    assertThat(fake.releases.get()).isZero(); // the stream did it
    assertThat(heard.get()).isNull();
  }

  @Test
  void withLockRunsTheWorkAndReleases() throws Exception {
    String result = client.withLock("orders/1", LockOptions.ttl(TTL), () -> {
      assertThat(fake.locks).containsKey("orders/1");
      return "done";
    });

    assertThat(result).isEqualTo("done");
    assertThat(fake.locks).isEmpty();
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  @Test
  void withLockReleasesWhenTheWorkThrows() {
    assertThatThrownBy(() -> client.withLock("orders/1", LockOptions.ttl(TTL), () -> {
      throw new IllegalStateException("the work failed");
    })).isInstanceOf(IllegalStateException.class).hasMessage("the work failed");

    assertThat(fake.locks).isEmpty();
  }

  @Test
  void withLockInterruptsTheWorkAndThrowsLeaseLostWhenTheLeaseIsLost() {
    long start = System.nanoTime();
    LeaseLostException e = catchThrowableOfType(() -> client.withLock("orders/1", LockOptions.ttl(TTL), () -> {
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(2)).until(() -> fake.streams.size() == 1);
      fake.endStreams(Status.NOT_FOUND.withDescription("lease on resource 'orders/1' is not held"));
      Thread.sleep(10_000); // interrupted when the loss is heard
      return "never";
    }), LeaseLostException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(e.getSuppressed()).hasAtLeastOneElementOfType(InterruptedException.class);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  @Test
  void withLockThrowsNotAcquiredWithoutRunningTheWork() {
    client.acquire("orders/1", LockOptions.ttl(TTL));
    boolean[] ran = {false};

    assertThatThrownBy(() -> client.withLock("orders/1",
        LockOptions.ttl(TTL).waitUpTo(Duration.ofMillis(20)), () -> ran[0] = true))
        .isInstanceOf(LockNotAcquiredException.class);
    assertThat(ran[0]).isFalse();
  }

  @Test
  void theTokenAppearsInNoStringTheCallerCanSee() {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL));
    String token = tokenOfLastAcquire();
    fake.locks.clear();
    LeaseLostException lost = catchThrowableOfType(() -> lease.extend(TTL), LeaseLostException.class);

    assertThat(lease.toString()).contains("orders/1").doesNotContain(token);
    assertThat(lost.getMessage()).doesNotContain(token);
    assertThat(lost.toString()).doesNotContain(token);
  }

  private static long lastSequence(List<KeepAliveRequest> requests) {
    return requests.get(requests.size() - 1).getSequence();
  }

  /** Rule 14: a replica going away (UNAVAILABLE) is no loss; the stream is reopened with the same token. */
  @Test
  void aKeptStreamEndedUnavailableIsReopenedWithTheSameTokenAndNoLoss() {
    fake.validity = Duration.ofSeconds(2);
    Lease lease = client.acquire("orders/1", LockOptions.ttl(Duration.ofSeconds(2))).keepAlive();
    String token = tokenOfLastAcquire();
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    lease.onLost(heard::add);
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveRequests.get() >= 2);
    long lastBefore = lastSequence(fake.keepAliveLog);
    long deadlineBefore = lease.deadlineNanos();
    // One stream so far, unless a slow answer (a busy machine) made the client take it for
    // silent and open a second beside it (rule 19): the streams opened after the end are counted.
    int streamsBefore = fake.keepAliveFirsts.size();

    fake.endStreams(Status.UNAVAILABLE.withDescription("the server is shutting down"));

    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveFirsts.size() > streamsBefore);
    KeepAliveRequest reopened = fake.keepAliveFirsts.get(streamsBefore);
    assertThat(reopened.getToken()).isEqualTo(token);
    assertThat(reopened.getResource()).isEqualTo("orders/1");
    assertThat(ProtoTime.fromProto(reopened.getTtl())).isEqualTo(Duration.ofSeconds(2));
    assertThat(reopened.getSequence()).as("sequences keep rising across streams").isGreaterThan(lastBefore);
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.deadlineNanos() > deadlineBefore);
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.fencingToken()).isEqualTo(fake.locks.get("orders/1").fence());
    assertThat(heard).isEmpty();
    assertThat(fake.releases.get()).isZero();
    assertThat(lease.release()).isTrue();
    assertThat(heard).isEmpty();
  }

  @Test
  void notFoundOnTheReopenedStreamIsALossReportedOnce() throws Exception {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(Duration.ofSeconds(2))).keepAlive();
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    lease.onLost(heard::add);
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveRequests.get() >= 1);

    fake.locks.clear(); // taken over while the replica restarts
    fake.endStreams(Status.UNAVAILABLE.withDescription("the server is shutting down"));

    await().atMost(Duration.ofSeconds(5)).until(() -> !heard.isEmpty());
    Thread.sleep(300);
    assertThat(heard).hasSize(1);
    assertThat(heard.get(0).status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(lease.isValid()).isFalse();
    assertThat(fake.keepAliveFirsts).as("not reopened after NOT_FOUND").hasSize(2);
  }

  @Test
  void whenEveryReopenFailsTheLeaseIsLostOnceAtItsGuardedDeadlineWhichDoesNotMoveMeanwhile() throws Exception {
    Duration ttl = Duration.ofSeconds(1);
    fake.validity = ttl;
    Lease lease = client.acquire("orders/1", LockOptions.ttl(ttl)).keepAlive();
    List<Long> lostAt = new CopyOnWriteArrayList<>();
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    lease.onLost(e -> {
      lostAt.add(System.nanoTime());
      heard.add(e);
    });
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveRequests.get() >= 1);

    fake.refuseKeepAlive = Status.UNAVAILABLE.withDescription("connection refused");
    fake.endStreams(Status.UNAVAILABLE.withDescription("the server is shutting down"));
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveFirsts.size() >= 2);
    long deadline = lease.deadlineNanos(); // no stream answers any more: it must stay where it is

    await().atMost(Duration.ofSeconds(5)).until(() -> !heard.isEmpty());
    Thread.sleep(300);
    assertThat(heard).hasSize(1);
    assertThat(heard.get(0).status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(lease.deadlineNanos()).isEqualTo(deadline);
    assertThat(lostAt.get(0)).as("reported before the deadline, not before its guard")
        .isLessThan(deadline).isGreaterThanOrEqualTo(deadline - Lease.guard(ttl).toNanos());
    assertThat(fake.keepAliveFirsts.size()).as("reopened with backoff until then").isGreaterThanOrEqualTo(3);
    int opened = fake.keepAliveFirsts.size();
    Thread.sleep(300);
    assertThat(fake.keepAliveFirsts.size()).as("no reopening after the loss").isLessThanOrEqualTo(opened + 1);
    assertThat(lease.isValid()).isFalse();
  }

  /** Rule 15: a kept lease's ttl changes through its stream, and the renewals follow the new ttl. */
  @Test
  void extendOfAKeptLeaseGoesThroughItsStreamAndLaterRequestsFollowTheNewTtl() throws Exception {
    fake.validityFollowsTtl = true;
    fake.validity = FakeLockService.validityFor(Duration.ofSeconds(2));
    Lease lease = client.acquire("orders/1", LockOptions.ttl(Duration.ofSeconds(2))).keepAlive();
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveRequests.get() >= 1);

    lease.extend(Duration.ofSeconds(6));

    assertThat(fake.extendCalls.get()).as("no unary Extend for a kept lease").isZero();
    assertThat(fake.keepAliveLog).anyMatch(r -> ProtoTime.fromProto(r.getTtl()).equals(Duration.ofSeconds(6)));
    assertThat(lease.remaining()).isGreaterThan(Duration.ofSeconds(5));
    int before = fake.keepAliveLog.size();
    Thread.sleep(1_200);
    List<KeepAliveRequest> after6 = fake.keepAliveLog.subList(before, fake.keepAliveLog.size());
    assertThat(after6).allMatch(r -> ProtoTime.fromProto(r.getTtl()).equals(Duration.ofSeconds(6)));
    assertThat(after6.size()).as("one request every 1.5 s now, not every 500 ms").isLessThanOrEqualTo(1);

    lease.extend(Duration.ofSeconds(1));
    long now = System.nanoTime();

    assertThat(lease.deadlineNanos()).as("no later than send time + 1 s - 1 % - 2 ms")
        .isLessThanOrEqualTo(now + Duration.ofMillis(988).toNanos());
    assertThat(lease.remaining()).isLessThanOrEqualTo(Duration.ofSeconds(1));
    before = fake.keepAliveLog.size();
    Thread.sleep(1_200);
    List<KeepAliveRequest> after1 = List.copyOf(fake.keepAliveLog.subList(before, fake.keepAliveLog.size()));
    assertThat(after1).allMatch(r -> ProtoTime.fromProto(r.getTtl()).equals(Duration.ofSeconds(1)));
    assertThat(after1.size()).as("one request every 250 ms").isGreaterThanOrEqualTo(3);
    assertThat(lease.isValid()).isTrue();
    assertThat(fake.extendCalls.get()).isZero();
    assertThat(lease.release()).isTrue();
  }

  @Test
  void aShorterTtlCutsTheDeadlineAtOnceAndAnswersToEarlierRequestsAreIgnored() throws Exception {
    Lease lease = client.acquire("orders/1", LockOptions.ttl(TTL)).keepAlive();
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveRequests.get() >= 1);
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.remaining().compareTo(Duration.ofSeconds(9)) > 0);
    fake.keepAliveSilent = true;
    long earlier = lastSequence(fake.keepAliveLog);

    long start = System.nanoTime();
    CompletableFuture<Lease> extended = CompletableFuture.supplyAsync(() -> lease.extend(Duration.ofSeconds(1)));
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveLog.stream()
        .anyMatch(r -> ProtoTime.fromProto(r.getTtl()).equals(Duration.ofSeconds(1))));
    KeepAliveRequest change = fake.keepAliveLog.stream()
        .filter(r -> ProtoTime.fromProto(r.getTtl()).equals(Duration.ofSeconds(1))).findFirst().orElseThrow();
    long cut = lease.deadlineNanos();
    assertThat(cut).as("cut before any answer").isLessThanOrEqualTo(System.nanoTime() + Duration.ofMillis(988).toNanos())
        .isGreaterThanOrEqualTo(start + Duration.ofMillis(988).toNanos());
    assertThat(extended).isNotDone();

    fake.answerKeepAlive("orders/1", earlier, Duration.ofSeconds(10)); // dated before the change
    Thread.sleep(200);
    assertThat(lease.deadlineNanos()).as("an answer to an earlier request is ignored").isEqualTo(cut);
    assertThat(extended).isNotDone();

    fake.answerKeepAlive("orders/1", change.getSequence(), Duration.ofMillis(900));
    assertThat(extended.get(5, TimeUnit.SECONDS)).isSameAs(lease);
    assertThat(lease.deadlineNanos()).as("send time + 900 ms is before the cut: moved only forward").isEqualTo(cut);
    assertThat(lease.isValid()).isTrue();
    assertThat(fake.extendCalls.get()).isZero();
  }

  /** SPEC 5: a client that declares a loss gives the lease back, so the next holder need not wait out its ttl. */
  @Test
  void aLeaseThatRanOutIsGivenBackAndAKeptOneIsHalfClosed() {
    fake.validity = Duration.ofMillis(300);
    Lease plain = client.acquire("orders/1", LockOptions.ttl(TTL));
    await().atMost(Duration.ofSeconds(5)).until(() -> !fake.locks.containsKey("orders/1"));
    assertThat(plain.isValid()).isFalse();
    assertThat(fake.releases.get()).isEqualTo(1);

    fake.keepAliveSilent = true; // renewals get no answer: the lease runs out with its stream up
    Lease kept = client.acquire("orders/2", LockOptions.ttl(TTL)).keepAlive();
    await().atMost(Duration.ofSeconds(5)).until(() -> !fake.locks.containsKey("orders/2"));
    assertThat(kept.isValid()).isFalse();
    assertThat(fake.releases.get()).as("released by the half-close, not a Release call").isEqualTo(1);
    assertThat(fake.streams).isEmpty();
  }
}
