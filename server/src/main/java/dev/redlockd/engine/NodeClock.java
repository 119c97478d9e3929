package dev.redlockd.engine;

/**
 * What one replica knows of one node's wall clock, from the TIME in that node's replies: the
 * interval in which its offset (the node's clock minus this replica's monotonic clock) lay at
 * the last reply, widened by the drift factor as time passes.
 *
 * <p>A reply sent at {@code s} and received at {@code r} (this replica's monotonic clock) whose
 * TIME reads {@code T} was read by the node at some instant in [s, r], so the offset then lay in
 * [T - r, T - s]: no assumption about where in the round trip the node ran the script. Between
 * two replies a clock whose rate is within the drift factor moves its offset by at most the
 * drift factor times the time between them. A reply whose interval lies beyond the interval
 * those allow by more than {@link #TOLERANCE_NANOS} shows a step. One that fits narrows the
 * interval (the truth lies in both), so the next reply is judged as tightly as the replies
 * allow, whoever sent them: every round's replies, and every probe's, pass through here.
 *
 * <p>A node this replica has no history of yet votes only once a probe has checked it against
 * what other replicas recorded ({@link ClockRecords}); one whose step this replica saw votes
 * no more until it has been quarantined on the node itself ({@link ClockWatch}).
 */
final class NodeClock {
  /**
   * What a reply may lie beyond the allowed interval and still not be a step: the interval
   * arithmetic is exact, so this only absorbs the microsecond of TIME and this replica's own
   * clock. Half the 2 ms that validity holds back besides the drift factor (see
   * docs/guarantees.md, Clock steps).
   */
  static final long TOLERANCE_NANOS = 1_000_000;
  /** A node's rate is measured over at least this long, against this replica's monotonic clock. */
  static final long RATE_WINDOW_NANOS = 60_000_000_000L;

  enum Verdict {
    /** The clock is where its history says: the reply counts as the script says. */
    VOTES,
    /** No history yet: the reply does not vote until a probe has checked the node's clock. */
    UNVETTED,
    /** The clock stepped (now or earlier, and the node is not quarantined yet): no vote. */
    STEPPED
  }

  /** What one reply showed: its verdict, and the step it showed first (0 when none, or not first). */
  record Seen(Verdict verdict, long stepNanos) {
    static final Seen VOTES = new Seen(Verdict.VOTES, 0);
    static final Seen UNVETTED = new Seen(Verdict.UNVETTED, 0);
    static final Seen STEPPED = new Seen(Verdict.STEPPED, 0);

    /** Whether this reply is the first to show a step. */
    boolean newStep() {
      return stepNanos != 0;
    }
  }

  private final double driftFactor;
  // All guarded by this.
  private String id = "";
  private boolean anchored;
  private long lo;
  private long hi;
  private long ref;
  /** A step seen and not yet answered by a quarantine on the node: signed nanoseconds, 0 when none. */
  private long pendingStep;
  private boolean rateStarted;
  private long rateRef;
  private long rateMid;
  private double rate = Double.NaN;

  NodeClock(double driftFactor) {
    this.driftFactor = driftFactor;
  }

  /**
   * Judges one reply: sent at {@code sent}, received at {@code received} (this replica's
   * monotonic clock), the node's TIME in nanoseconds. A reply that fits narrows the history.
   */
  synchronized Seen judge(long sent, long received, long nodeNanos) {
    if (!anchored) {
      return Seen.UNVETTED;
    }
    if (pendingStep != 0) {
      return Seen.STEPPED;
    }
    // Both intervals brought to one instant: the later of the history's and this reply's.
    long at = Math.max(ref, received);
    long grown = drift(at - ref);
    long expectedLo = lo - grown;
    long expectedHi = hi + grown;
    long slack = drift(at - sent);
    long sampleLo = nodeNanos - received - slack;
    long sampleHi = nodeNanos - sent + slack;
    if (sampleLo > expectedHi + TOLERANCE_NANOS || sampleHi < expectedLo - TOLERANCE_NANOS) {
      // The likeliest size: between the two intervals' middles.
      pendingStep = (sampleLo / 2 + sampleHi / 2) - (expectedLo / 2 + expectedHi / 2);
      if (pendingStep == 0) {
        pendingStep = sampleLo > expectedHi ? 1 : -1;
      }
      return new Seen(Verdict.STEPPED, pendingStep);
    }
    long narrowLo = Math.max(expectedLo, sampleLo);
    long narrowHi = Math.min(expectedHi, sampleHi);
    if (narrowLo <= narrowHi) {
      lo = narrowLo;
      hi = narrowHi;
    } else {
      // Apart by less than the tolerance: the history stays (widening), so a clock that creeps
      // on by less than the tolerance each time is still seen once the creep adds up.
      lo = expectedLo;
      hi = expectedHi;
    }
    ref = at;
    return Seen.VOTES;
  }

  /**
   * Starts (or, after a step, restarts) the history from one reply: what the clock reads now is
   * what later replies are judged against.
   */
  synchronized void anchor(long sent, long received, long nodeNanos) {
    long slack = drift(received - sent);
    lo = nodeNanos - received - slack;
    hi = nodeNanos - sent + slack;
    ref = received;
    anchored = true;
    rateStarted = false;
  }

  /** The node was quarantined on the node for the step this replica saw: the step is answered. */
  synchronized void quarantined() {
    pendingStep = 0;
  }

  /** A step seen and not yet answered by a quarantine on the node (signed nanoseconds), or 0. */
  synchronized long pendingStep() {
    return pendingStep;
  }

  /** Marks a step found by comparing with the other nodes' recorded clocks. */
  synchronized void stepped(long nanos) {
    pendingStep = nanos == 0 ? 1 : nanos;
  }

  synchronized boolean anchored() {
    return anchored;
  }

  /** Whether this replica's history of the clock is current: anchored, and no step pending. */
  synchronized boolean trusted() {
    return anchored && pendingStep == 0;
  }

  synchronized String id() {
    return id;
  }

  synchronized void id(String nodeId) {
    this.id = nodeId;
  }

  /**
   * Measures the node's rate against this replica's monotonic clock from the middle of the
   * history, over windows of at least {@link #RATE_WINDOW_NANOS}. Returns the rate difference
   * just measured (node seconds per replica second, minus 1), or NaN when no window closed.
   */
  synchronized double measureRate() {
    if (!anchored || pendingStep != 0) {
      return Double.NaN;
    }
    long mid = lo / 2 + hi / 2;
    if (!rateStarted) {
      rateStarted = true;
      rateRef = ref;
      rateMid = mid;
      return Double.NaN;
    }
    long window = ref - rateRef;
    if (window < RATE_WINDOW_NANOS) {
      return Double.NaN;
    }
    rate = (double) (mid - rateMid) / window;
    rateRef = ref;
    rateMid = mid;
    return rate;
  }

  /** The rate difference last measured (see {@link #measureRate}), NaN before the first window. */
  synchronized double rate() {
    return rate;
  }

  /** How far a clock within the drift factor may move its offset over {@code nanos}, rounded up. */
  private long drift(long nanos) {
    return nanos <= 0 ? 0 : (long) Math.ceil(driftFactor * nanos);
  }
}
