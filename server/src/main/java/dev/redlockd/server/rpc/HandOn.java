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
 * <p>A first renewal that misses while this replica's node monitor sees no quorum is not one
 * slow round but a replica cut off from the nodes: the stream is handed on at that miss, without
 * the retry. A holder handed on by this replica that round_robin sends back to it then hears
 * UNAVAILABLE after one node timeout instead of two and a tenth of the ttl (longer than the
 * silence bound its client holds a stream to), time its resume through a replica that has a
 * quorum needs. The first renewal is still tried rather than the stream refused at its open: the
 * monitor learns that the quorum is back only at its next probe, and a replica alone would
 * refuse its holders until then. A confirmed lease keeps the half-ttl wait: the monitor's probe
 * misses during a pause of this replica too, and every stream would move at once.
 */
final class HandOn {
  /** Misses of a stream's first renewals before it is handed on: the first, then its retry. */
  static final int UNCONFIRMED_MISSES = 2;

  private HandOn() {}

  /** Whether a confirmed lease in jeopardy, with {@code left} of its validity left, is handed on now. */
  static boolean due(Duration left, Duration ttl) {
    return ttl == null || left.compareTo(ttl.dividedBy(2)) < 0;
  }

  /** The status the stream ends with: UNAVAILABLE, saying why and that nothing was released. */
  static Status status(LockEngineException cause) {
    return Status.UNAVAILABLE.withDescription("this replica reached no quorum (" + cause.getMessage()
        + "): resume through another replica; nothing was released");
  }
}
