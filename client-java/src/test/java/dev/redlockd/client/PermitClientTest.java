package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A semaphore's permits through the client (rule 18 of clients/conformance/README.md): the
 * permit is asked for, carried in every later request of its lease, kept across same-token
 * retries, given back when abandoned, and named (never the token) in strings. Over the scripted
 * in-process fake; the bound itself is tested against the real server and real Redis.
 */
class PermitClientTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration CALL_TIMEOUT = Duration.ofMillis(400);
  private static final String SEM = "partner-api";

  private final FakeLockService fake = new FakeLockService();
  private Server server;
  private ManagedChannel channel;
  private LockClient client;

  @BeforeEach
  void start() throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(fake).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
    client = LockClient.builder(channel)
        .callTimeout(CALL_TIMEOUT)
        .retryPolicy(RetryPolicy.defaults()
                .withMaxAttempts(3).withInitialBackoff(Duration.ofMillis(10)).withMaxBackoff(Duration.ofMillis(40)))
        .build();
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
  void acquirePermitAsksForNPermitsAndTheLeaseSaysWhichItHolds() {
    Lease first = client.acquirePermit(SEM, 2, LockOptions.ttl(TTL));
    Lease second = client.acquirePermit(SEM, 2, LockOptions.ttl(TTL));

    assertThat(fake.acquires).extracting(AcquireRequest::getPermits).containsOnly(2);
    assertThat(first.permit()).isEqualTo(1);
    assertThat(second.permit()).isEqualTo(2);
    assertThat(first.resource()).isEqualTo(SEM);
    assertThat(second.fencingToken()).isEqualTo(fake.locks.get(FakeLockService.key(SEM, 2)).fence());
    assertThat(client.tryAcquirePermit(SEM, 2, LockOptions.ttl(TTL))).isEmpty();
    assertThatThrownBy(() -> client.acquirePermit(SEM, 2, LockOptions.ttl(TTL).waitUpTo(Duration.ofMillis(20))))
        .isInstanceOf(LockNotAcquiredException.class);

    // A lock is still a lock: permits 0, permit 0.
    Lease lock = client.acquire(SEM, LockOptions.ttl(TTL));
    assertThat(fake.acquires.get(fake.acquires.size() - 1).getPermits()).isZero();
    assertThat(lock.permit()).isZero();
  }

  @Test
  void fewerThanOnePermitIsRefusedBeforeAnythingIsSent() {
    assertThatThrownBy(() -> client.acquirePermit(SEM, 0, LockOptions.ttl(TTL)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("permits");
    assertThatThrownBy(() -> client.acquirePermit(SEM, -1, LockOptions.ttl(TTL)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(fake.acquires).isEmpty();
  }

  @Test
  void extendAndReleaseCarryThePermit() {
    client.acquirePermit(SEM, 3, LockOptions.ttl(TTL)); // permit 1, someone else's
    Lease lease = client.acquirePermit(SEM, 3, LockOptions.ttl(TTL));
    assertThat(lease.permit()).isEqualTo(2);

    lease.extend(Duration.ofSeconds(20));
    assertThat(fake.extendLog).extracting(ExtendRequest::getPermit).containsExactly(2);

    assertThat(lease.release()).isTrue();
    assertThat(fake.releaseLog).extracting(ReleaseRequest::getPermit).containsExactly(2);
    assertThat(fake.locks).containsKey(FakeLockService.key(SEM, 1)).doesNotContainKey(FakeLockService.key(SEM, 2));
  }

  @Test
  void everyKeepAliveRequestCarriesThePermitAcrossReopenedStreams() throws Exception {
    client.acquirePermit(SEM, 3, LockOptions.ttl(TTL));
    Lease lease = client.acquirePermit(SEM, 3, LockOptions.ttl(Duration.ofMillis(400))).keepAlive();
    await().atMost(Duration.ofSeconds(2)).until(() -> fake.keepAliveRequests.get() >= 2);

    fake.endStreams(Status.UNAVAILABLE.withDescription("replica shutting down"));
    await().atMost(Duration.ofSeconds(3)).until(() -> fake.keepAliveFirsts.size() >= 2 && fake.streams.size() == 1);
    lease.extend(Duration.ofMillis(600)); // through the stream (rule 15)
    assertThat(fake.extendCalls.get()).isZero();

    assertThat(fake.keepAliveLog).extracting(KeepAliveRequest::getPermit).containsOnly(2);
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.release()).isTrue(); // the half-close frees permit 2 only
    assertThat(fake.locks).containsOnlyKeys(FakeLockService.key(SEM, 1));
  }

  @Test
  void anAnswerLostPastTheDeadlineIsRetriedWithTheSameTokenAndGetsTheSamePermit() {
    client.acquirePermit(SEM, 3, LockOptions.ttl(TTL)); // permit 1
    fake.delayNextAcquireAnswer = CALL_TIMEOUT.multipliedBy(3); // granted permit 2, answer lost

    Lease lease = client.acquirePermit(SEM, 3, LockOptions.ttl(TTL));

    assertThat(fake.acquires).hasSize(3);
    assertThat(fake.acquires.get(2).getToken()).isEqualTo(fake.acquires.get(1).getToken());
    assertThat(fake.acquires.get(2).getPermits()).isEqualTo(3);
    assertThat(lease.permit()).isEqualTo(2);
    assertThat(fake.locks).as("one permit for the retried token, not two").hasSize(2);
    assertThat(lease.release()).isTrue();
    assertThat(fake.locks).containsOnlyKeys(FakeLockService.key(SEM, 1));
  }

  @Test
  void anAbandonedAcquireWhosePermitNoAnswerNamedReleasesEachPermitWithItsToken() {
    for (int i = 0; i < 1000; i++) { // more than fit in the call timeout: retried until it passes
      fake.failNextAcquire.add(Status.UNAVAILABLE.withDescription("1 of 3 nodes answered"));
    }

    LockServiceException e = catchThrowableOfType(
        () -> client.acquirePermit(SEM, 4, LockOptions.ttl(TTL)), LockServiceException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    String token = tokenOfLastAcquire();
    await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(fake.releaseLog)
        .extracting(ReleaseRequest::getPermit).containsExactlyInAnyOrder(1, 2, 3, 4));
    assertThat(fake.releaseLog).extracting(ReleaseRequest::getToken).containsOnly(token);
    assertThat(fake.releaseLog).extracting(ReleaseRequest::getResource).containsOnly(SEM);
  }

  @Test
  void grantsThatKeepRunningOutAreGivenBackByTheirPermitOnly() {
    client.acquirePermit(SEM, 3, LockOptions.ttl(TTL)); // permit 1
    fake.validity = Duration.ofMillis(300);
    fake.delayEveryAcquireAnswer = Duration.ofMillis(350);

    LockServiceException e = catchThrowableOfType(
        () -> client.acquirePermit(SEM, 3,
            LockOptions.ttl(Duration.ofMillis(300)).waitUpTo(Duration.ofSeconds(5))), LockServiceException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(fake.acquires.subList(1, fake.acquires.size())).extracting(AcquireRequest::getToken)
        .containsOnly(tokenOfLastAcquire());
    await().atMost(Duration.ofSeconds(2)).until(() -> !fake.locks.containsKey(FakeLockService.key(SEM, 2)));
    assertThat(fake.releaseLog).extracting(ReleaseRequest::getPermit).containsExactly(2);
    assertThat(fake.locks).containsOnlyKeys(FakeLockService.key(SEM, 1));
  }

  @Test
  void aPermitGrantedAfterTheCallerCancelledIsReleased() {
    fake.delayNextAcquireAnswer = Duration.ofMillis(200);
    CompletableFuture<Lease> pending = client.acquirePermitAsync(SEM, 2,
        LockOptions.ttl(TTL).waitUpTo(Duration.ofSeconds(5)));
    await().atMost(Duration.ofSeconds(2)).until(() -> !fake.locks.isEmpty());

    pending.cancel(false);

    await().atMost(Duration.ofSeconds(3)).until(fake.locks::isEmpty);
    assertThat(fake.releaseLog).extracting(ReleaseRequest::getPermit).contains(1);
  }

  @Test
  void theStringFormNamesThePermitAndNeverTheToken() {
    client.acquirePermit(SEM, 3, LockOptions.ttl(TTL));
    Lease lease = client.acquirePermit(SEM, 3, LockOptions.ttl(TTL));
    String token = tokenOfLastAcquire();
    fake.locks.clear();
    LeaseLostException lost = catchThrowableOfType(() -> lease.extend(TTL), LeaseLostException.class);

    assertThat(lease.toString()).contains(SEM).contains("permit=2").doesNotContain(token);
    assertThat(lost.getMessage()).doesNotContain(token);
    Lease released = client.acquirePermit(SEM, 3, LockOptions.ttl(TTL));
    released.release();
    assertThat(catchThrowableOfType(() -> released.extend(TTL), LeaseLostException.class))
        .hasMessageContaining("permit 1 of semaphore 'partner-api'")
        .hasMessageNotContaining(tokenOfLastAcquire());
    assertThat(client.acquire("orders/1", LockOptions.ttl(TTL)).toString()).doesNotContain("permit");
  }

  @Test
  void withPermitKeepsThePermitAliveWhileTheWorkRunsAndReleasesIt() throws Exception {
    client.acquirePermit(SEM, 2, LockOptions.ttl(TTL)); // permit 1
    int held = client.withPermit(SEM, 2, LockOptions.ttl(Duration.ofMillis(400)), lease -> {
      await().atMost(Duration.ofSeconds(2)).until(() -> fake.keepAliveRequests.get() >= 1);
      assertThat(fake.locks).containsKey(FakeLockService.key(SEM, 2));
      return lease.permit();
    });

    assertThat(held).isEqualTo(2);
    assertThat(fake.keepAliveLog).extracting(KeepAliveRequest::getPermit).containsOnly(2);
    assertThat(fake.locks).containsOnlyKeys(FakeLockService.key(SEM, 1));
    assertThat(Thread.currentThread().isInterrupted()).isFalse();

    client.acquirePermit(SEM, 2, LockOptions.ttl(TTL)); // both held now
    boolean[] ran = {false};
    assertThatThrownBy(() -> client.withPermit(SEM, 2,
        LockOptions.ttl(TTL).waitUpTo(Duration.ofMillis(20)), () -> ran[0] = true))
        .isInstanceOf(LockNotAcquiredException.class);
    assertThat(ran[0]).isFalse();
  }

  @Test
  void withPermitInterruptsTheWorkAndThrowsLeaseLostWhenThePermitIsLost() {
    LeaseLostException e = catchThrowableOfType(() -> client.withPermit(SEM, 2, LockOptions.ttl(TTL), () -> {
      await().atMost(Duration.ofSeconds(2)).until(() -> fake.streams.size() == 1);
      fake.endStreams(Status.NOT_FOUND.withDescription("permit 1 of semaphore 'partner-api' is not held"));
      Thread.sleep(10_000); // interrupted when the loss is heard
      return "never";
    }), LeaseLostException.class);

    assertThat(e.status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }
}
