package dev.redlockd.server.rpc;

import dev.redlockd.engine.LockEngineException;
import io.grpc.Status;
import java.time.Duration;

/**
 * When a replica whose renewals reach no quorum hands its kept streams (KeepAlive, Campaign) on
 * to another replica. The others may still reach a quorum (this one may be cut off from some
 * nodes that they reach), so holding a stream here until the validity runs out would lose a
 * lease that could have been kept. The stream ends UNAVAILABLE, releasing nothing, and its holder
 * resumes it through another replica, as after a shutdown.
 *
 * <p>Not at the first miss of a renewal that was confirmed before: a GC pause here or one slow
 * node misses a renewal without anything being wrong with this replica, and every stream moving
 * at once would be a storm of its own. A JEOPARDY answer goes out for each miss, and the stream
 * is handed on once less than half the ttl is left, which leaves its holder the other half to
 * resume in: a reopen, a renewal round, perhaps a detour through a replica that cannot reach a
 * quorum either. A stream whose first renewals miss (a lease just resumed here, or just granted)
 * has no validity to report and nothing to wait for: it is handed on when the engine's quiet
 * retry, a tenth of the ttl later, misses too ({@link #UNCONFIRMED_MISSES}), so that one slow
 * round, which a busy replica has now and then, moves no stream.
 *
 * <p>A stream that opens while this replica's node monitor sees no quorum (a holder resuming here,
 * perhaps just handed on by this very replica) is refused at once with UNAVAILABLE, before anything
 * is renewed or released: taking it on would leave its holder unanswered for two missed renewals
 * (a node timeout, a tenth of the ttl, a node timeout) before the hand-on, time its resume through
 * a replica that has a quorum needs. The monitor learns of a lost quorum from the first round
 * that misses a node it believed up (it probes at once) and of its return within a probe interval.
 */
final class HandOn {
  /** Misses of a stream's first renewals before it is handed on: the first, then its retry. */
  static final int UNCONFIRMED_MISSES = 2;

  private HandOn() {}

  /** Whether a confirmed lease in jeopardy, with {@code left} of its validity left, is handed on now. */
  static boolean due(Duration left, Duration ttl) {
    return ttl == null || left.compareTo(ttl.dividedBy(2)) < 0;
  }

  /** The status a stream opened without a quorum ends with at once: UNAVAILABLE, nothing taken on. */
  static Status refused() {
    return Status.UNAVAILABLE.withDescription("this replica reaches no quorum of Redis nodes now: "
        + "resume through another replica; nothing was released");
  }

  /** The status the stream ends with: UNAVAILABLE, saying why and that nothing was released. */
  static Status status(LockEngineException cause) {
    return Status.UNAVAILABLE.withDescription("this replica reached no quorum (" + cause.getMessage()
        + "): resume through another replica; nothing was released");
  }
}
