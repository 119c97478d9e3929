package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import dev.redlockd.node.Subscriber;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Waiting Acquire calls: wake-ups, the wait running out, cancellation, the waiting limit. */
class AcquireWaitTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  /**
   * Far below the one-minute retry delay, so only a wake-up grants within it; far above one
   * round on local nodes, however loaded the machine.
   */
  private static final long GRANT_BOUND_SECONDS = 10;
  private static EngineHarness h;

  @BeforeAll
  static void start() {
    // A long retry delay: a waiter granted quickly can only have been woken by the release.
    EngineConfig config = new EngineConfig("redlock:", 0.01, Duration.ofMillis(10), Duration.ofHours(1),
        Duration.ofSeconds(20), 2, Duration.ofMillis(100));
    h = EngineHarness.start(3, config);
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void releaseThroughThisEngineWakesTheOldestWaiterAtOnce() throws Exception {
    Grant holder = h.engine.acquire("wake", TTL, Duration.ZERO, "").join();
    CompletableFuture<Grant> waiter = h.engine.acquire("wake", TTL, Duration.ofSeconds(30), "");
    Thread.sleep(100);
    assertThat(waiter).isNotDone();
    long released = System.nanoTime();
    h.engine.release("wake", holder.token()).join();
    Grant next = waiter.get(2, TimeUnit.SECONDS);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released)).isLessThan(1000);
    assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
    h.engine.release("wake", next.token()).join();
  }

  @Test
  void waitRunningOutEndsWithLockHeld() {
    Grant holder = h.engine.acquire("wait-out", TTL, Duration.ZERO, "").join();
    long start = System.nanoTime();
    CompletableFuture<Grant> waiter = h.engine.acquire("wait-out", TTL, Duration.ofMillis(300), "");
    assertThatThrownBy(waiter::join).hasCauseInstanceOf(LockHeldException.class);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(250L, 2000L);
    h.engine.release("wait-out", holder.token()).join();
  }

  @Test
  void cancelledWaiterTakesNothingAfterwards() throws Exception {
    Grant holder = h.engine.acquire("cancel", TTL, Duration.ZERO, "").join();
    String token = LockToken.generate(new java.security.SecureRandom());
    CompletableFuture<Grant> waiter = h.engine.acquire("cancel", TTL, Duration.ofSeconds(30), token);
    waiter.cancel(false);
    h.engine.release("cancel", holder.token()).join();
    Thread.sleep(200);
    // Had the cancelled call taken the lock, this token would hold it now.
    assertThat(h.engine.release("cancel", token).join()).isFalse();
    Grant other = h.engine.acquire("cancel", TTL, Duration.ZERO, "").join();
    h.engine.release("cancel", other.token()).join();
  }

  @Test
  void callsPastTheWaitingLimitAreRefused() {
    Grant holder = h.engine.acquire("limit", TTL, Duration.ZERO, "").join();
    CompletableFuture<Grant> a = h.engine.acquire("limit", TTL, Duration.ofSeconds(30), "");
    CompletableFuture<Grant> b = h.engine.acquire("limit", TTL, Duration.ofSeconds(30), "");
    CompletableFuture<Grant> c = h.engine.acquire("limit", TTL, Duration.ofSeconds(30), "");
    assertThatThrownBy(c::join).isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(LimitExceededException.class);
    a.cancel(false);
    b.cancel(false);
    // Cancelled calls free their places.
    CompletableFuture<Grant> d = h.engine.acquire("limit", TTL, Duration.ofSeconds(30), "");
    assertThat(d).isNotDone();
    d.cancel(false);
    h.engine.release("limit", holder.token()).join();
  }

  @Test
  void aWaitOfCenturiesNeitherOverflowsNorKeepsAWaitingPlace() {
    // More calls than the limit (2) of waiting places: each is granted at once and gives its place back.
    for (int i = 0; i < 3; i++) {
      Grant lease = h.engine.acquire("centuries-" + i, TTL, Duration.ofSeconds(Long.MAX_VALUE), "").join();
      h.engine.release(lease.resource(), lease.token()).join();
    }
    Grant holder = h.engine.acquire("centuries", TTL, Duration.ZERO, "").join();
    CompletableFuture<Grant> a = h.engine.acquire("centuries", TTL, Duration.ofSeconds(Long.MAX_VALUE), "");
    CompletableFuture<Grant> b = h.engine.acquire("centuries", TTL, Duration.ofSeconds(30), "");
    assertThat(a).isNotDone();
    assertThat(b).isNotDone();
    a.cancel(false);
    b.cancel(false);
    h.engine.release("centuries", holder.token()).join();
  }

  /**
   * A release through this server hands the lock on in one round trip: the oldest waiter's round
   * starts as the release's scripts are sent, not when their answers are back. Shown with the
   * release's answers held back from the engine (the scripts themselves run at once) and the
   * nodes' release notices dropped on their way in: the waiter is granted while the release is
   * still unanswered. The retry delay is a minute, so nothing else can grant it in time.
   */
  @Test
  void theOldestWaiterIsGrantedBeforeTheReleaseIsAnswered() throws Exception {
    handsOnBeforeTheReleaseIsAnswered(false, "hand-on");
  }

  @Test
  void thriftyRoundsHandOnBeforeTheReleaseIsAnsweredToo() throws Exception {
    handsOnBeforeTheReleaseIsAnswered(true, "hand-on-thrifty");
  }

  private static void handsOnBeforeTheReleaseIsAnswered(boolean thrifty, String resource) throws Exception {
    CompletableFuture<Void> answers = new CompletableFuture<>();
    List<RedisNode> nodes = h.nodes.stream().map(n -> (RedisNode) new ReleaseAnswersHeld(n, answers)).toList();
    EngineConfig config = EngineHarness.testConfig().withRetryDelay(Duration.ofMinutes(1)).withThriftyRounds(thrifty);
    try (LockEngine engine = LockEngine.builder(nodes, config).build().start()) {
      Grant holder = engine.acquire(resource, TTL, Duration.ZERO, "").join();
      Rounds rounds = new Rounds();
      CompletableFuture<Grant> waiter = engine.acquire(resource, TTL, Duration.ofMinutes(1), "", "", "", null, rounds);
      // Its first round, refused; then the one its subscription's confirmation starts (a release
      // before it could have gone unheard), refused too: from then on it waits, for a minute.
      rounds.await(2);

      CompletableFuture<Boolean> release = engine.release(resource, holder.token());
      Grant next = waiter.get(GRANT_BOUND_SECONDS, TimeUnit.SECONDS);
      assertThat(release).as("the release, its answers held back").isNotDone();
      assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());

      answers.complete(null);
      assertThat(release.get(GRANT_BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
      assertThat(engine.release(resource, next.token()).join()).isTrue();
    } finally {
      answers.complete(null);
    }
  }

  /** Counts an Acquire call's rounds as they end. */
  private static final class Rounds implements AcquireObserver {
    private final AtomicInteger ended = new AtomicInteger();

    @Override
    public void roundEnded(int round, List<String> answered, int nodes, boolean granted) {
      ended.incrementAndGet();
    }

    void await(int count) throws InterruptedException {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(GRANT_BOUND_SECONDS);
      while (ended.get() < count) {
        assertThat(System.nanoTime() - until).as("%d rounds ended", count).isNegative();
        Thread.sleep(1);
      }
    }
  }

  /**
   * A real node whose answers to release scripts reach the engine only once {@code answers}
   * completes, and whose release notices never reach it (its subscriptions are made and confirmed).
   */
  private static final class ReleaseAnswersHeld extends ForwardingNode {
    private final CompletableFuture<Void> answers;

    ReleaseAnswersHeld(RedisNode real, CompletableFuture<Void> answers) {
      super(real);
      this.answers = answers;
    }

    @Override
    public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
      CompletableFuture<Object> reply = real.eval(script, keys, args);
      return script.name().equals("release") ? reply.thenCombine(answers, (r, ignored) -> r) : reply;
    }

    @Override
    public Subscriber subscriber(Subscriber.Listener listener) {
      return real.subscriber(new Subscriber.Listener() {
        @Override
        public void message(String channel, String payload) {}

        @Override
        public void subscribed(String channel) {
          listener.subscribed(channel);
        }
      });
    }
  }
}
