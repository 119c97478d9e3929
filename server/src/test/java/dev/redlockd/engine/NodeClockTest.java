package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** One replica's history of one node's clock: what it counts as a step, and what not. */
class NodeClockTest {
  private static final double DRIFT = 0.01;
  private static final long MS = 1_000_000;
  /** The node's clock when the replica's monotonic clock reads 0. */
  private static final long NODE = 1_800_000_000_000_000_000L;

  private final NodeClock clock = new NodeClock(DRIFT);
  private long stepped;

  /** A reply sent at {@code at} (replica ms), answered after {@code rtt} ms, from a node running at {@code rate}. */
  private NodeClock.Seen reply(long at, long rtt, double rate) {
    long sent = at * MS;
    long read = sent + rtt * MS / 2;
    return clock.judge(sent, sent + rtt * MS, NODE + (long) (read * rate) + stepped);
  }

  @Test
  void aNodeNotYetCheckedDoesNotVote() {
    assertThat(reply(0, 1, 1).verdict()).isEqualTo(NodeClock.Verdict.UNVETTED);
  }

  @Test
  void clocksWhoseRateIsWithinTheDriftFactorNeverStep() {
    for (double rate : new double[] {1 + 0.9 * DRIFT, 1 - 0.9 * DRIFT}) {
      NodeClock fresh = new NodeClock(DRIFT);
      fresh.anchor(0, MS, NODE + MS / 2);
      for (long at = 500; at <= 600_000; at += 500) {
        long sent = at * MS;
        long read = sent + MS / 2;
        assertThat(fresh.judge(sent, sent + MS, NODE + (long) (read * rate)).verdict()).as("rate %s at %d ms", rate, at)
            .isEqualTo(NodeClock.Verdict.VOTES);
      }
    }
  }

  @Test
  void aStepBeyondWhatTheDriftFactorAllowsSinceTheLastReplyIsSeenWithItsSize() {
    clock.anchor(0, MS, NODE + MS / 2);
    assertThat(reply(1000, 1, 1).verdict()).isEqualTo(NodeClock.Verdict.VOTES);
    stepped = 30_000 * MS;
    NodeClock.Seen seen = reply(1500, 1, 1);
    assertThat(seen.verdict()).isEqualTo(NodeClock.Verdict.STEPPED);
    assertThat(seen.stepNanos()).isBetween(29_990 * MS, 30_010 * MS);
    // Until the node is quarantined for it, every reply is a stepped one, and none reports it again.
    assertThat(reply(1600, 1, 1)).isEqualTo(NodeClock.Seen.STEPPED);
    assertThat(clock.pendingStep()).isEqualTo(seen.stepNanos());
    clock.anchor(1600 * MS, 1601 * MS, NODE + 1600 * MS + stepped);
    clock.quarantined();
    assertThat(reply(1700, 1, 1).verdict()).isEqualTo(NodeClock.Verdict.VOTES);
  }

  @Test
  void aStepBackIsSeenToo() {
    clock.anchor(0, MS, NODE + MS / 2);
    stepped = -5_000 * MS;
    NodeClock.Seen seen = reply(200, 1, 1);
    assertThat(seen.verdict()).isEqualTo(NodeClock.Verdict.STEPPED);
    assertThat(seen.stepNanos()).isNegative();
  }

  /**
   * The resolution: after a silence of g, a step of up to drift x g (plus the tolerance and the
   * round trips) looks like a clock running at the edge of the drift factor.
   */
  @Test
  void aStepSmallerThanTheDriftAllowedOverTheSilenceIsNotTellableFromARate() {
    clock.anchor(0, MS, NODE + MS / 2);
    stepped = 9 * MS; // under 1% of the 1 s since the last reply
    assertThat(reply(1000, 0, 1).verdict()).isEqualTo(NodeClock.Verdict.VOTES);
    NodeClock other = new NodeClock(DRIFT);
    other.anchor(0, MS, NODE + MS / 2);
    long sent = 1000 * MS;
    assertThat(other.judge(sent, sent, NODE + sent + 12 * MS).verdict()).as("12 ms: beyond 10 ms + 1 ms")
        .isEqualTo(NodeClock.Verdict.STEPPED);
  }

  @Test
  void aClockThatCreepsOnByLessThanTheToleranceEachTimeIsSeenOnceTheCreepAddsUp() {
    clock.anchor(0, 0, NODE);
    int replies = 0;
    NodeClock.Seen seen;
    do {
      replies++;
      stepped += MS * 9 / 10; // 0.9 ms a millisecond: 90 times the drift factor
      seen = reply(replies, 0, 1);
    } while (seen.verdict() == NodeClock.Verdict.VOTES && replies < 100);
    assertThat(seen.verdict()).isEqualTo(NodeClock.Verdict.STEPPED);
    assertThat(replies).isLessThan(5);
  }

  @Test
  void theRateIsMeasuredOverAMinuteOrMore() {
    double rate = 1.02;
    double measured = Double.NaN;
    NodeClock fast = new NodeClock(0.05); // a drift factor that lets 2 % through
    fast.anchor(0, MS, NODE + MS / 2);
    for (long at = 500; at <= 130_000; at += 500) {
      long sent = at * MS;
      long read = sent + MS / 2;
      assertThat(fast.judge(sent, sent + MS, NODE + (long) (read * rate)).verdict()).isEqualTo(NodeClock.Verdict.VOTES);
      double now = fast.measureRate();
      if (!Double.isNaN(now)) {
        measured = now;
      }
    }
    assertThat(measured).isBetween(0.0199, 0.0201);
    assertThat(fast.rate()).isEqualTo(measured);
  }
}
