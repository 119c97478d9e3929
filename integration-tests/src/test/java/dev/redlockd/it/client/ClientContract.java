package dev.redlockd.it.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LeaseLostException;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockNotAcquiredException;
import dev.redlockd.client.LockOptions;
import dev.redlockd.it.support.ServerHarness;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The Java client's contract with a real server over 3 redis-server processes: the cases of
 * LockClientTest that need no scripted fault, each checked by what a second client then sees.
 * Each subclass carries the calls its own way (in-process, Netty).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ClientContract {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final AtomicInteger names = new AtomicInteger();

  private ServerHarness h;
  private LockClient locks;
  /** A second process's view: its own channel, its own client. */
  private ManagedChannel competitorChannel;
  private LockClient competitor;

  /** The real server with these flags over 3 fresh redis-server processes; the caller closes it. */
  protected abstract ServerHarness startServer(String... flags) throws Exception;

  @BeforeAll
  void start() throws Exception {
    // ForceRelease takes a lease away behind its holder's back, as an expiry followed by a
    // takeover would, without waiting out a ttl the holder's own timer would notice first.
    h = startServer("--allow-force-release");
    locks = LockClient.create(h.channel());
    competitorChannel = h.newChannel();
    competitor = LockClient.create(competitorChannel);
  }

  @AfterAll
  void stop() throws Exception {
    if (competitorChannel != null) {
      competitorChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (h != null) {
      h.close();
    }
  }

  private static String resource() {
    return "client-contract-" + names.incrementAndGet();
  }

  private void takeOverBehindTheHoldersBack(String resource) {
    h.blocking().forceRelease(ForceReleaseRequest.newBuilder().setResource(resource).build());
  }

  /** Whether another client can take the lock now; releases it again if so. */
  private boolean freeForAnotherClient(String resource) {
    Optional<Lease> taken = competitor.tryAcquire(resource, LockOptions.ttl(TTL));
    taken.ifPresent(Lease::release);
    return taken.isPresent();
  }

  @Test
  void acquireReturnsALeaseThatHoldsTheLock() {
    String r = resource();
    Lease lease = locks.acquire(r, LockOptions.ttl(TTL));

    assertThat(lease.resource()).isEqualTo(r);
    assertThat(lease.fencingToken()).isPositive();
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.remaining()).isPositive().isLessThanOrEqualTo(TTL);
    assertThat(competitor.tryAcquire(r, LockOptions.ttl(TTL))).isEmpty();
    // The server holds the lock under the token the client made: releasing with it works.
    assertThat(lease.release()).isTrue();
    Lease next = competitor.acquire(r, LockOptions.ttl(TTL));
    assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
    assertThat(next.release()).isTrue();
  }

  @Test
  void acquireThrowsLockNotAcquiredWhenHeldBySomeoneElse() {
    String r = resource();
    Lease holder = competitor.acquire(r, LockOptions.ttl(TTL));

    long start = System.nanoTime();
    LockNotAcquiredException e = catchThrowableOfType(LockNotAcquiredException.class,
        () -> locks.acquire(r, LockOptions.ttl(TTL).waitUpTo(Duration.ofMillis(200))));

    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("waited before giving up")
        .isGreaterThanOrEqualTo(150);
    assertThat(e.status().getCode()).isEqualTo(Status.Code.ABORTED);
    assertThat(e).hasMessageContaining(r);
    assertThat(holder.release()).as("the holder's lease is untouched").isTrue();
  }

  @Test
  void tryAcquireIsEmptyWhileHeldAndPresentOnceReleased() {
    String r = resource();
    Lease holder = competitor.acquire(r, LockOptions.ttl(TTL));

    assertThat(locks.tryAcquire(r, LockOptions.ttl(TTL))).isEmpty();
    assertThat(holder.release()).isTrue();
    Optional<Lease> after = locks.tryAcquire(r, LockOptions.ttl(TTL));
    assertThat(after).isPresent();
    assertThat(after.get().release()).isTrue();
  }

  @Test
  void extendMovesTheDeadlineAndKeepsTheLockPastTheFirstTtl() throws InterruptedException {
    String r = resource();
    Duration first = Duration.ofSeconds(1);
    Lease lease = locks.acquire(r, LockOptions.ttl(first));
    long firstDeadline = lease.deadlineNanos();

    lease.extend(TTL);

    assertThat(lease.deadlineNanos() - firstDeadline).isGreaterThan(Duration.ofSeconds(8).toNanos());
    Thread.sleep(first.plusMillis(300).toMillis());
    assertThat(lease.isValid()).isTrue();
    assertThat(competitor.tryAcquire(r, LockOptions.ttl(TTL))).as("still held on the server").isEmpty();
    assertThat(lease.release()).isTrue();
  }

  @Test
  void extendOfALeaseNoLongerHeldThrowsLeaseLostAndFiresOnLost() {
    String r = resource();
    Lease lease = locks.acquire(r, LockOptions.ttl(TTL));
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    lease.onLost(heard::set);
    takeOverBehindTheHoldersBack(r);
    Lease next = competitor.acquire(r, LockOptions.ttl(TTL));

    LeaseLostException e = catchThrowableOfType(LeaseLostException.class, () -> lease.extend(TTL));

    assertThat(e.status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(heard.get()).isSameAs(e);
    assertThat(lease.isValid()).isFalse();
    assertThat(next.release()).as("the failed extend left the new holder alone").isTrue();
  }

  @Test
  void releaseIsIdempotentAndTrueOnlyOnce() {
    String r = resource();
    Lease lease = locks.acquire(r, LockOptions.ttl(TTL));

    assertThat(lease.release()).isTrue();
    Lease next = competitor.acquire(r, LockOptions.ttl(TTL));
    assertThat(lease.release()).isFalse();
    lease.close();

    assertThat(lease.isValid()).isFalse();
    assertThat(next.release()).as("the repeated releases did not free the next holder's lock").isTrue();
  }

  @Test
  void releaseOfALeaseTakenOverSaysFalse() {
    String r = resource();
    Lease lease = locks.acquire(r, LockOptions.ttl(TTL));
    takeOverBehindTheHoldersBack(r);
    Lease next = competitor.acquire(r, LockOptions.ttl(TTL));

    assertThat(lease.release()).isFalse();

    assertThat(locks.tryAcquire(r, LockOptions.ttl(TTL))).as("the new holder still holds it").isEmpty();
    assertThat(next.release()).isTrue();
  }

  @Test
  void keepAliveMovesTheDeadlineAndKeepsTheLockPastItsTtl() throws InterruptedException {
    String r = resource();
    Duration ttl = Duration.ofSeconds(2);
    Lease lease = locks.acquire(r, LockOptions.ttl(ttl)).keepAlive();
    long firstDeadline = lease.deadlineNanos();

    Thread.sleep(ttl.plusMillis(500).toMillis());

    assertThat(lease.isValid()).isTrue();
    assertThat(lease.deadlineNanos()).isGreaterThan(firstDeadline);
    assertThat(competitor.tryAcquire(r, LockOptions.ttl(ttl))).as("still held on the server").isEmpty();
    assertThat(lease.release()).isTrue();
    assertThat(freeForAnotherClient(r)).isTrue();
  }

  @Test
  void releasingAKeptLeaseHalfClosesItsStreamAndFreesTheLock() {
    String r = resource();
    Lease lease = locks.acquire(r, LockOptions.ttl(TTL)).keepAlive();
    await().atMost(Duration.ofSeconds(2)).until(() -> h.server().openStreams() > 0);
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    lease.onLost(heard::set);

    assertThat(lease.release()).isTrue();

    await().atMost(Duration.ofSeconds(2)).until(() -> h.server().openStreams() == 0);
    assertThat(heard.get()).as("a release the holder asked for is no loss").isNull();
    assertThat(freeForAnotherClient(r)).isTrue();
  }

  @Test
  void withLockRunsTheWorkWhileHoldingTheLockAndReleases() throws Exception {
    String r = resource();

    String result = locks.withLock(r, LockOptions.ttl(TTL), lease -> {
      assertThat(competitor.tryAcquire(r, LockOptions.ttl(TTL))).as("held while the work runs").isEmpty();
      assertThat(lease.fencingToken()).isPositive();
      return "done";
    });

    assertThat(result).isEqualTo("done");
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
    assertThat(freeForAnotherClient(r)).isTrue();
  }

  @Test
  void withLockReleasesWhenTheWorkThrows() {
    String r = resource();

    assertThatThrownBy(() -> locks.withLock(r, LockOptions.ttl(TTL), () -> {
      throw new IllegalStateException("the work failed");
    })).isInstanceOf(IllegalStateException.class).hasMessage("the work failed");

    assertThat(freeForAnotherClient(r)).isTrue();
  }

  @Test
  void withLockThrowsNotAcquiredWithoutRunningTheWork() {
    String r = resource();
    Lease holder = competitor.acquire(r, LockOptions.ttl(TTL));
    boolean[] ran = {false};

    assertThatThrownBy(() -> locks.withLock(r,
        LockOptions.ttl(TTL).waitUpTo(Duration.ofMillis(50)), () -> ran[0] = true))
        .isInstanceOf(LockNotAcquiredException.class);

    assertThat(ran[0]).isFalse();
    assertThat(holder.release()).as("the holder's lease is untouched").isTrue();
  }
}
