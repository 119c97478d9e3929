package dev.redlockd.engine;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * How far behind the engine runs, as the server's admission control reads it: the mean, over
 * a short window, of how long each round (an acquire, a release, a batch of renewals) waited
 * for a quorum of nodes to answer it, and of how late each batch of renewals left after it fell
 * due.
 *
 * <p>Why a quorum's answer and not every node's: with one node down, every round waits out
 * the node timeout for it, yet the server is not behind, and the rounds are decided without
 * it. A quorum answers late only when the nodes themselves are behind (their CPU), or the
 * threads that read their replies are (the I/O loops, the engine's scheduler, GC): then the
 * calls that follow miss the node timeout and fail, and a new holder costs more than it gets.
 * A timeout counts as an answer at the timeout, so a quorum of timeouts reads as very late.
 *
 * <p>A window with fewer than {@link #MIN_SAMPLES} rounds says nothing: a quiet server's one
 * slow round (a GC pause) is not a backlog.
 */
public final class Backlog {
  static final long WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  static final int MIN_SAMPLES = 8;

  private final LongSupplier nanoClock;
  // All guarded by this.
  private long windowStart;
  private long sum;
  private int count;
  /** The mean of the window before this one, or -1 when it had too few rounds (or was longer ago). */
  private long previousMean = -1;

  Backlog(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    this.windowStart = nanoClock.getAsLong();
  }

  /** One round, or one batch's lateness, that took {@code nanos}. */
  void record(long nanos) {
    long now = nanoClock.getAsLong();
    synchronized (this) {
      roll(now);
      sum += Math.max(0, nanos);
      count++;
    }
  }

  /**
   * How late the rounds of the last window run on average: the larger of the last full window's
   * mean and the current one's (once it has enough rounds); zero when neither has.
   */
  public Duration lateness() {
    long now = nanoClock.getAsLong();
    synchronized (this) {
      roll(now);
      long current = count >= MIN_SAMPLES ? sum / count : -1;
      return Duration.ofNanos(Math.max(0, Math.max(previousMean, current)));
    }
  }

  private void roll(long now) { // holding this
    long elapsed = now - windowStart;
    if (elapsed < WINDOW_NANOS) {
      return;
    }
    previousMean = elapsed < 2 * WINDOW_NANOS && count >= MIN_SAMPLES ? sum / count : -1;
    windowStart = now;
    sum = 0;
    count = 0;
  }

  /** Times one round from now until {@code quorum} of its node calls have ended, answered or failed. */
  Round round(int quorum) {
    return new Round(nanoClock.getAsLong(), quorum);
  }

  /** One round being timed: each node call that ends calls {@link #ended()}. */
  final class Round {
    private final long startNanos;
    private final int quorum;
    private final AtomicInteger ended = new AtomicInteger();

    private Round(long startNanos, int quorum) {
      this.startNanos = startNanos;
      this.quorum = quorum;
    }

    void ended() {
      if (ended.incrementAndGet() == quorum) {
        record(nanoClock.getAsLong() - startNanos);
      }
    }
  }
}
