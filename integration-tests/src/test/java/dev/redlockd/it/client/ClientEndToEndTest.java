package dev.redlockd.it.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LeaseLostException;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockOptions;
import dev.redlockd.it.support.ExclusionChecker;
import dev.redlockd.it.support.LiveServer;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Java client against the real server over Netty and 5 real redis-server processes. */
class ClientEndToEndTest {
  private static final AtomicInteger names = new AtomicInteger();
  private static LiveServer h;
  private static LockClient locks;
  /** A second process's view: its own channel, its own client. */
  private static ManagedChannel otherChannel;
  private static LockClient competitor;

  @BeforeAll
  static void start() throws Exception {
    h = new LiveServer(5);
    locks = LockClient.create(h.channel);
    otherChannel = h.newChannel();
    competitor = LockClient.create(otherChannel);
  }

  @AfterAll
  static void stop() throws Exception {
    otherChannel.shutdownNow();
    h.close();
  }

  @AfterEach
  void thawNodes() {
    h.cluster.resumeAll();
  }

  private static String resource() {
    return "client-" + names.incrementAndGet();
  }

  /** What one contending thread does once, recording its critical section in the checker. */
  private interface Section {
    void run(LockClient client, String holder, ExclusionChecker checker) throws Exception;
  }

  /** 16 threads, half on each of two clients (two "processes"), 10 sections each. */
  private static ExclusionChecker contend(Section section) throws Exception {
    ExclusionChecker checker = new ExclusionChecker();
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        String me = "thread-" + t;
        LockClient client = t % 2 == 0 ? locks : competitor;
        done.add(pool.submit(() -> {
          for (int i = 0; i < 10; i++) {
            section.run(client, me, checker);
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(3, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(checker.sections.get()).isEqualTo(160);
    return checker;
  }

  private static void briefly() throws InterruptedException {
    Thread.sleep(1 + ThreadLocalRandom.current().nextInt(3));
  }

  @Test
  void withLockFromSixteenThreadsOnOneResourceNeverOverlaps() throws Exception {
    String r = resource();
    ExclusionChecker checker = contend((client, me, c) ->
        client.withLock(r, LockOptions.ttl(Duration.ofSeconds(2)).waitUpTo(Duration.ofSeconds(60)), lease -> {
          c.enter(r, me, lease.fencingToken());
          briefly();
          c.exit(r, me);
          return null;
        }));
    assertThat(checker.overlaps.get()).isZero();
    assertThat(checker.fenceViolations.get()).isZero();
  }

  @Test
  void leasesClosedByTryWithResourcesNeverOverlapAndTheirFencesRise() throws Exception {
    String r = resource();
    ExclusionChecker checker = contend((client, me, c) -> {
      try (Lease lease = client.acquire(r, LockOptions.ttl(Duration.ofSeconds(2)).waitUpTo(Duration.ofSeconds(60)))) {
        c.enter(r, me, lease.fencingToken());
        briefly();
        c.exit(r, me);
      }
    });
    assertThat(checker.overlaps.get()).isZero();
    assertThat(checker.fenceViolations.get()).isZero();
  }

  @Test
  void keepAliveHoldsA500msLeaseForFiveSeconds() throws Exception {
    String r = resource();
    Lease lease = locks.acquire(r, LockOptions.ttl(Duration.ofMillis(500))).keepAlive();
    AtomicReference<LeaseLostException> lost = new AtomicReference<>();
    lease.onLost(lost::set);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    int checks = 0;
    while (System.nanoTime() < end) {
      assertThat(lease.isValid()).as("valid after %d checks", checks).isTrue();
      assertThat(competitor.tryAcquire(r, LockOptions.ttl(Duration.ofSeconds(1)))).isEmpty();
      checks++;
      Thread.sleep(100);
    }
    assertThat(checks).isGreaterThan(20);
    assertThat(lost.get()).isNull();

    assertThat(lease.release()).isTrue();
    Lease next = competitor.tryAcquire(r, LockOptions.ttl(Duration.ofSeconds(1))).orElseThrow();
    assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
    next.close();
  }

  @Test
  void onLostFiresWhenAMajorityIsFrozenPastTheValidity() throws Exception {
    String r = resource();
    Lease lease = locks.acquire(r, LockOptions.ttl(Duration.ofMillis(600))).keepAlive();
    CountDownLatch lost = new CountDownLatch(1);
    AtomicReference<LeaseLostException> heard = new AtomicReference<>();
    lease.onLost(e -> {
      heard.set(e);
      lost.countDown();
    });

    h.cluster.pause(0, 1, 2);
    long frozen = System.nanoTime();

    assertThat(lost.await(3, TimeUnit.SECONDS)).isTrue();
    // Heard no later than the validity (600 ms) plus a renewal period and some slack.
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozen)).isLessThan(1_500);
    assertThat(heard.get().status().getCode()).isIn(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED);
    assertThat(lease.isValid()).isFalse();
    h.cluster.resume(0, 1, 2);
    lease.close(); // never throws for a lost lease
  }

  @Test
  void withLockInterruptsTheWorkWhenAMajorityIsFrozenPastTheValidity() throws Exception {
    String r = resource();
    AtomicReference<Boolean> interrupted = new AtomicReference<>(false);
    long[] frozenAt = new long[1];

    LeaseLostException e = catchThrowableOfType(() -> locks.withLock(r, LockOptions.ttl(Duration.ofMillis(600)), () -> {
      h.cluster.pause(0, 1, 2);
      frozenAt[0] = System.nanoTime();
      try {
        Thread.sleep(10_000);
      } catch (InterruptedException stop) {
        interrupted.set(true);
        throw stop;
      }
      return "finished";
    }), LeaseLostException.class);

    long heardAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozenAt[0]);
    h.cluster.resume(0, 1, 2);
    assertThat(e).isNotNull();
    assertThat(interrupted.get()).isTrue();
    assertThat(heardAfterMs).isLessThan(3_000);
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
    // Once the nodes are back and the lease has run out, the lock can be had again.
    Lease next = competitor.acquire(r, LockOptions.ttl(Duration.ofSeconds(2)).waitUpTo(Duration.ofSeconds(5)));
    assertThat(next.isValid()).isTrue();
    next.close();
  }
}
