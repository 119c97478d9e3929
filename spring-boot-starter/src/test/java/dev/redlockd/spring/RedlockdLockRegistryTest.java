package dev.redlockd.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.redlockd.client.LockClient;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The LockRegistry contract, as RedisLockRegistry's and JdbcLockRegistry's own tests hold those
 * registries to it (Spring Integration ships no shared suite for LockRegistry implementations:
 * spring-integration-test-support has none), against the real server over a real socket and 5
 * real Redis nodes. Two registries, each with its own client and channel, stand for two
 * instances of an application.
 */
@ExtendWith(BackendExtension.class)
class RedlockdLockRegistryTest {
  private static final Duration TTL = Duration.ofSeconds(2);

  private static ManagedChannel channelA;
  private static ManagedChannel channelB;
  private static RedlockdLockRegistry a;
  private static RedlockdLockRegistry b;
  private static final List<String> lost = new CopyOnWriteArrayList<>();
  private static Backend backend;

  @BeforeAll
  static void start(Backend started) {
    backend = started;
    channelA = backend.newChannel();
    channelB = backend.newChannel();
    a = RedlockdLockRegistry.builder(LockClient.create(channelA)).prefix("registry-test/").ttl(TTL)
        .listener(new RedlockdLockListener() {
          @Override
          public void lost(String lockKey, RedlockdLockLostException e) {
            lost.add(lockKey);
          }
        }).build();
    b = RedlockdLockRegistry.builder(LockClient.create(channelB)).prefix("registry-test/").ttl(TTL).build();
  }

  @AfterAll
  static void stop() {
    channelA.shutdownNow();
    channelB.shutdownNow();
  }

  private static String key() {
    return UUID.randomUUID().toString();
  }

  @Test
  void lockTakesALeaseThatUnlockGivesBack() {
    String key = key();
    Lock lock = a.obtain(key);
    lock.lock();
    assertThat(backend.held("registry-test/" + key)).isTrue();
    assertThat(a.heldLocks()).isEqualTo(1);
    assertThat(b.obtain(key).tryLock()).isFalse();
    lock.unlock();
    assertThat(backend.held("registry-test/" + key)).isFalse();
    assertThat(a.heldLocks()).isZero();
    assertThat(b.obtain(key).tryLock()).isTrue();
    b.obtain(key).unlock();
  }

  @Test
  void obtainGivesTheSameLockForTheSameKey() {
    String key = key();
    assertThat(a.obtain(key)).isSameAs(a.obtain(key)).isNotSameAs(a.obtain(key()));
    assertThatThrownBy(() -> a.obtain(42)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void tryLockWaitsForTheOtherInstanceAndGivesUpAfterItsTimeout() throws Exception {
    String key = key();
    b.obtain(key).lock();
    try {
      long start = System.nanoTime();
      assertThat(a.obtain(key).tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
      assertThat(a.obtain(key).isLocked()).isFalse();
    } finally {
      b.obtain(key).unlock();
    }
  }

  @Test
  void tryLockIsGrantedWhenTheHolderUnlocksWithinItsTimeout() throws Exception {
    String key = key();
    RedlockdLock held = b.obtain(key);
    held.lock();
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      Future<Boolean> waiting = other.submit(() -> {
        boolean got = a.obtain(key).tryLock(10, TimeUnit.SECONDS);
        if (got) {
          a.obtain(key).unlock();
        }
        return got;
      });
      Thread.sleep(200);
      assertThat(waiting).isNotDone();
      held.unlock();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
    } finally {
      other.shutdownNow();
    }
  }

  @Test
  void isReentrantPerThreadAndOnlyTheLastUnlockGivesTheLeaseBack() {
    String key = key();
    RedlockdLock lock = a.obtain(key);
    lock.lock();
    assertThat(lock.tryLock()).isTrue();
    long fence = lock.fencingToken();
    lock.unlock();
    assertThat(backend.held("registry-test/" + key)).isTrue();
    assertThat(lock.isHeldByCurrentThread()).isTrue();
    assertThat(lock.fencingToken()).isEqualTo(fence);
    lock.unlock();
    assertThat(backend.held("registry-test/" + key)).isFalse();
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void unlockByAThreadThatDoesNotHoldItThrows() throws Exception {
    String key = key();
    RedlockdLock lock = a.obtain(key);
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    lock.lock();
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      Future<?> foreign = other.submit(() -> {
        lock.unlock();
        return null;
      });
      assertThatThrownBy(() -> foreign.get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalMonitorStateException.class);
      assertThat(other.submit(() -> lock.tryLock()).get(10, TimeUnit.SECONDS)).isFalse();
      assertThat(backend.held("registry-test/" + key)).isTrue();
    } finally {
      other.shutdownNow();
      lock.unlock();
    }
    assertThatThrownBy(lock::fencingToken).isInstanceOf(IllegalMonitorStateException.class);
    assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void lockInterruptiblyStopsWaitingWhenInterrupted() throws Exception {
    String key = key();
    b.obtain(key).lock();
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      CountDownLatch waiting = new CountDownLatch(1);
      AtomicReference<Thread> waiter = new AtomicReference<>();
      Future<?> call = other.submit(() -> {
        waiter.set(Thread.currentThread());
        waiting.countDown();
        a.obtain(key).lockInterruptibly();
        return null;
      });
      waiting.await();
      Thread.sleep(200);
      waiter.get().interrupt();
      assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(InterruptedException.class);
      assertThat(a.obtain(key).isLocked()).isFalse();
    } finally {
      other.shutdownNow();
      b.obtain(key).unlock();
    }
    // The cancelled Acquire left nothing behind: the lock is free once its holder unlocked.
    assertThat(a.obtain(key).tryLock(5, TimeUnit.SECONDS)).isTrue();
    a.obtain(key).unlock();
  }

  @Test
  void fencingTokensRiseFromOneHolderToTheNext() {
    String key = key();
    RedlockdLock first = a.obtain(key);
    first.lock();
    long one = first.fencingToken();
    first.unlock();
    RedlockdLock second = b.obtain(key);
    second.lock();
    long two = second.fencingToken();
    second.unlock();
    assertThat(two).isGreaterThan(one);
  }

  @Test
  void contendingThreadsOfTwoInstancesNeverOverlap() throws Exception {
    String key = key();
    AtomicReference<Thread> inside = new AtomicReference<>();
    AtomicInteger entries = new AtomicInteger();
    List<Long> fences = new CopyOnWriteArrayList<>();
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (RedlockdLockRegistry registry : List.of(a, b, a, b)) {
        workers.add(threads.submit(() -> {
          for (int i = 0; i < 8; i++) {
            RedlockdLock lock = registry.obtain(key);
            lock.lockInterruptibly();
            try {
              assertThat(inside.compareAndSet(null, Thread.currentThread())).as("no one else inside").isTrue();
              fences.add(lock.fencingToken());
              entries.incrementAndGet();
              Thread.sleep(2);
              assertThat(inside.compareAndSet(Thread.currentThread(), null)).isTrue();
            } finally {
              lock.unlock();
            }
          }
          return null;
        }));
      }
      for (Future<?> w : workers) {
        w.get(60, TimeUnit.SECONDS);
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(entries).hasValue(32);
    // Every hold of a lease that another instance's hold followed has a lower fence.
    assertThat(fences.get(fences.size() - 1)).isGreaterThan(fences.get(0));
  }

  @Test
  void aLostLeaseIsReportedAtOnceAndTheHoldersNextCallThrows() {
    String key = key();
    RedlockdLock lock = a.obtain(key);
    lock.lock();
    backend.forceRelease("registry-test/" + key);
    // The next renewal (every ttl/4 = 500 ms) finds the lease gone: reported then, not at unlock.
    await().atMost(Duration.ofSeconds(5)).until(() -> lost.contains(key));
    assertThat(lock.isValid()).isFalse();
    assertThatThrownBy(lock::tryLock).isInstanceOf(RedlockdLockLostException.class);
    assertThatThrownBy(lock::unlock)
        .isInstanceOf(RedlockdLockLostException.class)
        .isInstanceOf(java.util.ConcurrentModificationException.class)
        .hasMessageContaining(key)
        .satisfies(e -> assertThat(((RedlockdLockLostException) e).getCause().status().getCode())
            .isEqualTo(Status.Code.NOT_FOUND));
    // The hold ended: the lock is free, and the next holder gets a new lease.
    assertThat(lock.isLocked()).isFalse();
    assertThat(b.obtain(key).tryLock()).isTrue();
    b.obtain(key).unlock();
  }

  @Test
  void executeLockedRunsTheTaskUnderTheLock() throws Exception {
    String key = key();
    String result = a.executeLocked(key, () -> {
      assertThat(backend.held("registry-test/" + key)).isTrue();
      return "done";
    });
    assertThat(result).isEqualTo("done");
    assertThat(backend.held("registry-test/" + key)).isFalse();
  }

  @Test
  void expireUnusedOlderThanForgetsOnlyLocksNoThreadHolds() {
    String held = key();
    String unused = key();
    RedlockdLock heldLock = a.obtain(held);
    RedlockdLock unusedLock = a.obtain(unused);
    heldLock.lock();
    try {
      a.expireUnusedOlderThan(0);
      assertThat(a.obtain(held)).isSameAs(heldLock);
      assertThat(a.obtain(unused)).isNotSameAs(unusedLock);
    } finally {
      heldLock.unlock();
    }
  }

  @Test
  void renewLockChangesTheTtlOfTheHeldLease() {
    String key = key();
    assertThatThrownBy(() -> a.renewLock(key)).isInstanceOf(IllegalMonitorStateException.class);
    RedlockdLock lock = a.obtain(key);
    lock.lock();
    try {
      a.renewLock(key, Duration.ofSeconds(20));
      assertThat(lock.isValid()).isTrue();
    } finally {
      lock.unlock();
    }
  }
}
