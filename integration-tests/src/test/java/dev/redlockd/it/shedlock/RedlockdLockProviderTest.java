package dev.redlockd.it.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockOptions;
import dev.redlockd.it.support.ExclusionChecker;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.DescribeResponse;
import dev.redlockd.shedlock.RedlockdLockProvider;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockingTaskExecutor.TaskResult;
import net.javacrumbs.shedlock.core.LockingTaskExecutor.TaskWithResult;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ShedLock provider under ShedLock's own DefaultLockingTaskExecutor, against the real server
 * over Netty and 3 real redis-server processes. Two executors on two clients, each on its own
 * channel, stand for two instances of an application.
 */
class RedlockdLockProviderTest {
  private static final AtomicInteger names = new AtomicInteger();
  private static final Duration NO_MINIMUM = Duration.ZERO;
  private static LiveServer h;
  private static ManagedChannel otherChannel;
  private static LockClient clientA;
  private static LockClient clientB;
  private static LockingTaskExecutor executorA;
  private static LockingTaskExecutor executorB;
  private static ExecutorService background;

  @BeforeAll
  static void start() throws Exception {
    h = new LiveServer(3);
    otherChannel = h.newChannel();
    clientA = LockClient.create(h.channel);
    clientB = LockClient.create(otherChannel);
    executorA = new DefaultLockingTaskExecutor(new RedlockdLockProvider(clientA, "shedlock/"));
    executorB = new DefaultLockingTaskExecutor(new RedlockdLockProvider(clientB, "shedlock/"));
    background = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void stop() throws Exception {
    background.shutdownNow();
    otherChannel.shutdownNow();
    h.close();
  }

  @Test
  void contendingTasksNeverOverlapAndTheirFencingTokensRise() throws Exception {
    String name = name();
    ExclusionChecker checker = new ExclusionChecker();
    List<LockingTaskExecutor> executors = List.of(executorA, executorB);
    AtomicInteger[] skipped = {new AtomicInteger(), new AtomicInteger()};
    AtomicBoolean[] done = {new AtomicBoolean(), new AtomicBoolean()};
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    List<Future<Integer>> instances = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      int me = i;
      int other = 1 - i;
      String holder = "instance " + me; // one String: the checker compares holders by identity
      instances.add(background.submit(() -> {
        int ran = 0;
        while (ran < 5 && System.nanoTime() < until) {
          TaskResult<Long> result = run(executors.get(me), config(name, Duration.ofSeconds(5), NO_MINIMUM), () -> {
            long fence = RedlockdLockProvider.currentFencingToken();
            checker.enter(name, holder, fence);
            // Inside until the other instance has tried once more (unless it is done): every
            // section is contended, and an attempt let in would be an overlap.
            int before = skipped[other].get();
            while (skipped[other].get() == before && !done[other].get() && System.nanoTime() < until) {
              Thread.sleep(1);
            }
            checker.exit(name, holder);
            return fence;
          });
          if (result.wasExecuted()) {
            ran++;
          } else {
            skipped[me].incrementAndGet();
          }
        }
        done[me].set(true);
        return ran;
      }));
    }

    List<Integer> runs = new ArrayList<>();
    for (Future<Integer> instance : instances) {
      runs.add(instance.get(30, TimeUnit.SECONDS));
    }
    assertThat(checker.overlaps).as("sections that overlapped").hasValue(0);
    assertThat(checker.fenceViolations).as("fencing tokens not above the one before").hasValue(0);
    assertThat(runs).as("runs of each instance").containsExactly(5, 5);
    assertThat(skipped[0].get() + skipped[1].get()).as("attempts that found the other instance inside")
        .isGreaterThanOrEqualTo(5);
  }

  @Test
  void lockAtLeastForKeepsEveryoneOutUntilItPassesEvenAfterTheTaskEnded() throws Exception {
    String name = name();
    Duration atLeast = Duration.ofMillis(1500);
    long t0 = System.nanoTime();
    TaskResult<Long> first = run(executorA, config(name, Duration.ofSeconds(10), atLeast),
        RedlockdLockProvider::currentFencingToken);
    assertThat(first.wasExecuted()).isTrue();
    assertThat(run(executorA, config(name, Duration.ofSeconds(10), NO_MINIMUM), () -> 0L).wasExecuted())
        .as("the same instance again, right after").isFalse();

    long[] next = firstRun(executorB, name);

    assertThat(Duration.ofNanos(next[0] - t0)).as("when the other instance first ran it")
        .isGreaterThanOrEqualTo(atLeast)
        // Shortened at unlock: not held until lockAtMostFor (10 s).
        .isLessThan(atLeast.plusSeconds(2));
    assertThat(next[1]).isGreaterThan(first.getResult());
  }

  @Test
  void lockAtLeastForHoldsAlsoWhenTheServerKeepsALargerDriftAllowance() throws Exception {
    // A tenth of each ttl held back for drift (the default is a hundredth): the first Extend
    // at unlock falls short of lockAtLeastFor, and the answer says by how much.
    try (LiveServer drifty = new LiveServer(3, "--drift-factor", "0.1")) {
      ManagedChannel second = drifty.newChannel();
      try {
        LockingTaskExecutor a = new DefaultLockingTaskExecutor(new RedlockdLockProvider(LockClient.create(drifty.channel)));
        LockingTaskExecutor b = new DefaultLockingTaskExecutor(new RedlockdLockProvider(LockClient.create(second)));
        String name = name();
        Duration atLeast = Duration.ofMillis(1500);
        long t0 = System.nanoTime();
        assertThat(run(a, config(name, Duration.ofSeconds(10), atLeast), () -> 0L).wasExecuted()).isTrue();

        long[] next = firstRun(b, name);

        assertThat(Duration.ofNanos(next[0] - t0)).as("when the other instance first ran it")
            .isGreaterThanOrEqualTo(atLeast)
            .isLessThan(atLeast.plusSeconds(2));
      } finally {
        second.shutdownNow();
      }
    }
  }

  @Test
  void unlockingAfterLockAtLeastForReleasesAtOnce() throws Exception {
    String name = name();
    Duration atLeast = Duration.ofMillis(200);
    run(executorA, config(name, Duration.ofSeconds(10), atLeast), () -> {
      long started = System.nanoTime(); // after the lock's start
      while (System.nanoTime() - started <= atLeast.toNanos()) {
        Thread.sleep(10); // a task that lasts longer than lockAtLeastFor
      }
      return 0L;
    });

    assertThat(run(executorB, config(name, Duration.ofSeconds(10), NO_MINIMUM), () -> 0L).wasExecuted())
        .as("the other instance's very first attempt").isTrue();
  }

  @Test
  void anInterruptedTaskStillGivesItsLockBackAndKeepsItsInterrupt() throws Exception {
    String name = name();
    Future<Boolean> interrupted = background.submit(() -> {
      run(executorA, config(name, Duration.ofSeconds(10), NO_MINIMUM), () -> {
        Thread.currentThread().interrupt(); // as a scheduler shutting down would
        return 0L;
      });
      return Thread.interrupted();
    });

    assertThat(interrupted.get(10, TimeUnit.SECONDS)).as("the interrupt, still set after the unlock").isTrue();
    assertThat(run(executorB, config(name, Duration.ofSeconds(10), NO_MINIMUM), () -> 0L).wasExecuted())
        .as("the other instance's very first attempt").isTrue();
  }

  @Test
  void lockAtMostForEndsTheLockOfAHungTask() throws Exception {
    String name = name();
    Duration atMost = Duration.ofSeconds(1);
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    long t0 = System.nanoTime();
    Future<TaskResult<Long>> hung = background.submit(() -> run(executorA, config(name, atMost, NO_MINIMUM), () -> {
      started.countDown();
      letGo.await();
      return RedlockdLockProvider.currentFencingToken();
    }));
    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();

    long[] next = firstRun(executorB, name);

    assertThat(hung).as("the hung task").isNotDone();
    // The hung instance's client gives the lease back a guard (here 50 ms) and the drift
    // allowance (12 ms) before the nodes would let it expire, less the Acquire's own time.
    assertThat(Duration.ofNanos(next[0] - t0)).as("when the other instance first ran it")
        .isGreaterThanOrEqualTo(atMost.minusMillis(250));
    letGo.countDown();
    TaskResult<Long> late = hung.get(5, TimeUnit.SECONDS);
    assertThat(late.wasExecuted()).isTrue();
    assertThat(late.getResult()).isLessThan(next[1]);
  }

  @Test
  void extendingRenewsTheLockAndRestartsLockAtLeastFor() throws Exception {
    String name = name();
    Duration atLeast = Duration.ofMillis(1500);
    AtomicLong extendedAt = new AtomicLong();
    AtomicLong tokenAfter = new AtomicLong();
    TaskResult<Long> first = run(executorA, config(name, Duration.ofSeconds(1), NO_MINIMUM), () -> {
      long before = RedlockdLockProvider.currentFencingToken();
      extendedAt.set(System.nanoTime());
      LockExtender.extendActiveLock(Duration.ofSeconds(5), atLeast);
      tokenAfter.set(RedlockdLockProvider.currentFencingToken());
      return before;
    });

    long[] next = firstRun(executorB, name);

    assertThat(tokenAfter.get()).as("the fencing token after the extend").isEqualTo(first.getResult());
    // Without the extend the lease would have run out 1 s after the lock, before this.
    assertThat(Duration.ofNanos(next[0] - extendedAt.get())).as("when the other instance first ran it")
        .isGreaterThanOrEqualTo(atLeast)
        .isLessThan(atLeast.plusSeconds(2));
  }

  @Test
  void extendingALostLockFailsAndTheTaskSeesWhy() throws Exception {
    String name = name();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch takenOver = new CountDownLatch(1);
    Future<TaskResult<Long>> overrun = background.submit(() -> run(executorA,
        config(name, Duration.ofMillis(300), NO_MINIMUM), () -> {
          started.countDown();
          takenOver.await();
          LockExtender.extendActiveLock(Duration.ofSeconds(5), NO_MINIMUM);
          return 0L;
        }));
    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
    firstRun(executorB, name);
    takenOver.countDown();

    // Not an IllegalStateException from the unlock that follows: the lease is gone, and the
    // unlock of a lock whose extend found it lost does nothing.
    assertThatThrownBy(() -> overrun.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(LockExtender.LockCanNotBeExtendedException.class);
  }

  @Test
  void aLockHeldElsewhereMakesExecuteWithLockSkipTheTask() throws Exception {
    String name = name();
    AtomicInteger ran = new AtomicInteger();
    long heldToken;
    try (Lease held = clientB.acquire("shedlock/" + name, LockOptions.ttl(Duration.ofSeconds(10)))) {
      heldToken = held.fencingToken();
      TaskResult<Long> skipped = run(executorA, config(name, Duration.ofSeconds(5), NO_MINIMUM), () -> {
        ran.incrementAndGet();
        return 0L;
      });
      assertThat(skipped.wasExecuted()).isFalse();
      assertThat(ran).hasValue(0);
      // The prefix is part of the resource: the same name without it is another lock.
      LockingTaskExecutor unprefixed = new DefaultLockingTaskExecutor(new RedlockdLockProvider(clientA));
      assertThat(run(unprefixed, config(name, Duration.ofSeconds(5), NO_MINIMUM), () -> 0L).wasExecuted()).isTrue();
    }

    TaskResult<Long> after = run(executorA, config(name, Duration.ofSeconds(5), NO_MINIMUM),
        RedlockdLockProvider::currentFencingToken);
    assertThat(after.wasExecuted()).isTrue();
    assertThat(after.getResult()).isGreaterThan(heldToken);
  }

  @Test
  void theFencingTokenIsTheInnermostRunningTasks() throws Exception {
    String outer = name();
    String inner = name();
    assertThatThrownBy(RedlockdLockProvider::currentFencingToken).isInstanceOf(IllegalStateException.class);

    // Each as {what the task read, what the server's Describe reports for its resource}.
    List<long[]> seen = run(executorA, config(outer, Duration.ofSeconds(5), NO_MINIMUM), () -> {
      long[] inOuter = {RedlockdLockProvider.currentFencingToken(), describedFence(outer)};
      long[] inInner = run(executorA, config(inner, Duration.ofSeconds(5), NO_MINIMUM),
          () -> new long[] {RedlockdLockProvider.currentFencingToken(), describedFence(inner)}).getResult();
      long[] afterInner = {RedlockdLockProvider.currentFencingToken(), describedFence(outer)};
      return List.of(inOuter, inInner, afterInner);
    }).getResult();

    assertThat(seen.get(0)[0]).as("inside the outer task").isEqualTo(seen.get(0)[1]);
    assertThat(seen.get(1)[0]).as("inside the inner task").isEqualTo(seen.get(1)[1]).isNotEqualTo(seen.get(0)[0]);
    assertThat(seen.get(2)[0]).as("in the outer task, after the inner one").isEqualTo(seen.get(2)[1]);
    assertThatThrownBy(RedlockdLockProvider::currentFencingToken).isInstanceOf(IllegalStateException.class);
  }

  private static long describedFence(String name) {
    DescribeResponse described = h.blocking.describe(DescribeRequest.newBuilder().setResource("shedlock/" + name).build());
    assertThat(described.getHeld()).isTrue();
    return described.getFencingToken();
  }

  @Test
  void aLockIsUnlockedOrExtendedOnce() {
    RedlockdLockProvider provider = new RedlockdLockProvider(clientA, "shedlock/");
    String name = name();
    SimpleLock lock = provider.lock(config(name, Duration.ofSeconds(5), NO_MINIMUM)).orElseThrow();
    SimpleLock extended = lock.extend(Duration.ofSeconds(5), NO_MINIMUM).orElseThrow();

    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("extended");
    assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(5), NO_MINIMUM)).isInstanceOf(IllegalStateException.class);
    extended.unlock();
    assertThatThrownBy(extended::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("unlocked");
    assertThat(provider.lock(config(name, Duration.ofSeconds(5), NO_MINIMUM))).as("free again").isPresent()
        .get().satisfies(SimpleLock::unlock);
  }

  /**
   * Tries {@code executor} every 10 ms until it runs a task under {@code name}, for at most
   * 10 s: when that task started, on {@link System#nanoTime()}, and its fencing token.
   */
  private static long[] firstRun(LockingTaskExecutor executor, String name) throws Exception {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < giveUp) {
      TaskResult<long[]> result = run(executor, config(name, Duration.ofSeconds(5), NO_MINIMUM),
          () -> new long[] {System.nanoTime(), RedlockdLockProvider.currentFencingToken()});
      if (result.wasExecuted()) {
        return result.getResult();
      }
      Thread.sleep(10);
    }
    throw new AssertionError("the lock '" + name + "' stayed taken for 10 s");
  }

  private static <T> TaskResult<T> run(LockingTaskExecutor executor, LockConfiguration config, TaskWithResult<T> task)
      throws Exception {
    try {
      return executor.executeWithLock(task, config);
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
  }

  private static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
    return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
  }

  private static String name() {
    return "job-" + names.incrementAndGet();
  }
}
