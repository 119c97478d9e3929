package dev.redlockd.engine;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * One Acquire call: Redlock rounds until one grants or the wait runs out. Between rounds no
 * thread is held: the next round is a scheduled task, which a release through this server
 * may run early ({@link #wake()}).
 */
final class AcquireOperation {
  /**
   * Set while rounds start on a caller's thread ({@link #startHere}): a round answered at once
   * (failed without a node's answer) must not complete the call there, where its callbacks would
   * run under whatever the caller holds.
   */
  private static final ThreadLocal<Boolean> startingHere = new ThreadLocal<>();

  private final Redlock redlock;
  private final LeaseRounds rounds;
  private final Waiters waiters;
  private final ScheduledExecutorService scheduler;
  private final LongSupplier nanoClock;
  private final Random random;
  private final Duration retryDelay;
  private final String resource;
  private final long deadlineNanos;
  /** When the caller stops listening (its gRPC deadline), if it said: no round starts from then on. */
  private final long callDeadlineNanos;
  private final boolean hasCallDeadline;
  /** The caller's deadline comes before the end of the wait it asked for: the wait ends with it. */
  private final boolean waitEndsWithCaller;
  private final boolean releaseIfAbandoned;
  private final AcquireObserver observer;
  private final int nodeCount;
  private final CompletableFuture<Grant> result = new CompletableFuture<>();

  /** The next round while between rounds, else null. */
  private ScheduledFuture<?> pendingRound; // guarded by this
  /**
   * A round is in flight. Cancelling the pending round is not enough to know none is: a
   * FutureTask whose run has begun still cancels "successfully". Two rounds of one call could
   * both be granted, and the later grant, finding the call answered, would release the lease
   * its caller now holds.
   */
  private boolean roundUnderway; // guarded by this
  private boolean waiting; // guarded by this
  /** A release woke this call while a round was under way: the next round runs at once. */
  private boolean wokenDuringRound; // guarded by this
  /** Rounds started so far, for the observer. */
  private int roundsStarted; // guarded by this

  AcquireOperation(Redlock redlock, LeaseRounds rounds, Waiters waiters, ScheduledExecutorService scheduler,
      LongSupplier nanoClock, Random random, Duration retryDelay, boolean tokenFromCaller, Duration wait,
      Duration callerLeavesIn, AcquireObserver observer) {
    this.observer = observer;
    this.nodeCount = redlock.nodeCount();
    this.redlock = redlock;
    this.rounds = rounds;
    this.waiters = waiters;
    this.scheduler = scheduler;
    this.nanoClock = nanoClock;
    this.random = random;
    this.retryDelay = retryDelay;
    this.resource = rounds.resource();
    long now = nanoClock.getAsLong();
    this.hasCallDeadline = callerLeavesIn != null;
    this.callDeadlineNanos = hasCallDeadline ? now + saturatedNanos(callerLeavesIn) : 0;
    // The caller's deadline caps the wait: retries end when it does, whatever wait it asked for.
    long waitNanos = saturatedNanos(wait);
    this.waitEndsWithCaller = hasCallDeadline && callDeadlineNanos - now <= waitNanos;
    this.deadlineNanos = waitEndsWithCaller ? now + Math.max(0, callDeadlineNanos - now) : now + waitNanos;
    // A caller that chose its token may retry with it, and that retry may be granted before a
    // round of this abandoned call finishes: releasing then would take the lock away from the
    // retry, which believes it holds it. Such a lease is the caller's to release or to let expire.
    this.releaseIfAbandoned = !tokenFromCaller;
  }

  /** A wait of centuries is a wait without end, not an overflow. */
  private static long saturatedNanos(Duration wait) {
    Duration cap = Duration.ofNanos(Long.MAX_VALUE / 4);
    return wait.compareTo(cap) > 0 ? cap.toNanos() : wait.toNanos();
  }

  String resource() {
    return resource;
  }

  /**
   * Starts the first round. Cancelling the returned future (the caller went away) stops the
   * rounds; a lease granted by a round already under way is then released if the token was
   * made here (no one else can know it), and left to run out otherwise.
   */
  CompletableFuture<Grant> start() {
    result.whenComplete((lease, failure) -> {
      synchronized (this) {
        if (pendingRound != null) {
          pendingRound.cancel(false);
          pendingRound = null;
        }
      }
      waiters.remove(this);
    });
    round();
    return result;
  }

  private void round() {
    Throwable tooLate;
    int number = 0;
    synchronized (this) {
      if (roundUnderway || result.isDone()) {
        return; // a wake-up and the retry it replaced both got here: one round is enough
      }
      pendingRound = null;
      tooLate = callerGone();
      if (tooLate == null) {
        roundUnderway = true;
        number = ++roundsStarted;
      }
    }
    if (tooLate != null) {
      result.completeExceptionally(tooLate);
      return;
    }
    if (observer == AcquireObserver.NONE) {
      rounds.next(null).whenComplete(this::afterRound);
      return;
    }
    int thisRound = number;
    AtomicReference<List<String>> answered = new AtomicReference<>(List.of());
    rounds.next(answered::set).whenComplete((lease, failure) -> {
      try {
        observer.roundEnded(thisRound, answered.get(), nodeCount, lease != null);
      } finally {
        afterRound(lease, failure); // whatever the observer did, the call goes on
      }
    });
  }

  /**
   * The answer for a call whose caller's deadline has passed, else null. Its gRPC cancel may not
   * have reached the engine yet: a round started now could be granted a lease nobody will hear
   * of, which with the caller's own token stays held until its ttl runs out.
   */
  private Throwable callerGone() { // called holding this
    if (!hasCallDeadline || nanoClock.getAsLong() - callDeadlineNanos < 0) {
      return null;
    }
    return callerDeadline();
  }

  private CallerDeadlineException callerDeadline() {
    return new CallerDeadlineException("resource '" + resource + "': the caller's deadline passed while it waited");
  }

  /** Runs {@code rounds}, which start rounds on this thread; any answered at once goes on on the scheduler. */
  static void startHere(Runnable rounds) {
    startingHere.set(Boolean.TRUE);
    try {
      rounds.run();
    } finally {
      startingHere.remove();
    }
  }

  private void afterRound(Grant lease, Throwable failure) {
    if (startingHere.get() != null) {
      scheduler.execute(() -> afterRound(lease, failure));
      return;
    }
    if (lease != null) {
      // Answered before the round counts as over: a wake-up in between must find the call done.
      boolean delivered = result.complete(lease);
      synchronized (this) {
        roundUnderway = false;
      }
      if (!delivered && releaseIfAbandoned) {
        rounds.giveBack(lease, redlock);
      }
      return;
    }
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause() : failure;
    long left = deadlineNanos - nanoClock.getAsLong();
    boolean retryable = cause instanceof LockHeldException || cause instanceof QuorumUnavailableException;
    // A refusal that shows where to go (the permit this token holds, another permit free on a
    // quorum) is followed at once, even by a call that does not wait: it is the same attempt.
    boolean atOnce = retryable && rounds.retryAtOnce(cause);
    if (!retryable || (left <= 0 && !atOnce)) {
      result.completeExceptionally(retryable && waitEndsWithCaller ? callerDeadline() : cause);
      synchronized (this) {
        roundUnderway = false;
      }
      return;
    }
    long half = retryDelay.toNanos() / 2;
    long delay = atOnce ? 0 : Math.min(left, half + (long) (random.nextDouble() * half));
    boolean first;
    synchronized (this) {
      roundUnderway = false;
      if (result.isDone()) {
        return;
      }
      if (wokenDuringRound) {
        wokenDuringRound = false;
        delay = 0;
      }
      pendingRound = scheduler.schedule(this::round, delay, TimeUnit.NANOSECONDS);
      // A round that goes at once is still the same attempt: the call waits (and listens for
      // releases) only once a round is refused with nowhere to go.
      first = !waiting && !atOnce;
      waiting = waiting || !atOnce;
    }
    if (first) {
      waiters.add(this);
      if (result.isDone()) {
        waiters.remove(this); // completed while being added: start()'s clean-up may have run first
      }
    }
  }

  /**
   * A release through this server: the next round runs now, or, when a round is under way
   * (it may have started before the release and fail), right after it. Always taken, so that
   * the oldest waiter gets the next try and waiters are served in order. False for a call
   * already over, and for one whose caller's deadline has passed: it starts no round, and ends
   * (at once, or when the round under way ends).
   */
  boolean wake() {
    return wake(scheduler);
  }

  /**
   * {@link #wake()}, the round (if one starts now) run by {@code runner}: the scheduler, or
   * the caller's own thread, whose node calls then reach each node after the ones it made
   * before (see {@link Waiters#handOn}).
   */
  boolean wake(Executor runner) {
    Throwable tooLate;
    synchronized (this) {
      if (result.isDone()) {
        return false;
      }
      tooLate = callerGone();
      if (tooLate == null && roundUnderway) {
        wokenDuringRound = true;
        return true;
      }
      if (pendingRound != null) {
        // If it has begun to run, round() sees the one started below (or this one sees it).
        pendingRound.cancel(false);
        pendingRound = null;
      }
      if (tooLate != null && roundUnderway) {
        return false; // its answer is the round's; the release goes to the next waiter
      }
    }
    if (tooLate != null) {
      // The caller is no longer listening: the release goes to the next waiter.
      result.completeExceptionally(tooLate);
      return false;
    }
    runner.execute(this::round);
    return true;
  }
}
