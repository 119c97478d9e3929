package dev.redlockd.server.rpc;

import dev.redlockd.engine.LockEngineException;
import dev.redlockd.server.metrics.LeaseMeter;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stream that keeps something alive for its client (KeepAlive: a lease; Campaign: a
 * leadership), and the two ways the server itself stops keeping it, releasing nothing: its
 * client has been silent for longer than the ttl ({@link ReaderSilence}: the stream ends
 * DEADLINE_EXCEEDED and what it kept runs out at its ttl), or this replica reaches no quorum
 * ({@link HandOn}: the stream ends UNAVAILABLE and the holder resumes through another replica).
 */
abstract class KeptStream<R> extends ServerStream<R> {
  private static final Logger log = LoggerFactory.getLogger(KeptStream.class);

  private final String kind;
  private final String kept;
  private final ReaderSilence reader;
  private final BooleanSupplier quorum;
  /** The ttl the client asked for last: what its silence and the hand-on are measured against. */
  private volatile Duration ttl;
  /** First renewals missed so far (the engine reports them one at a time). */
  private int unconfirmedMisses; // guarded by this

  /** {@code kind}: "KeepAlive" or "Campaign"; {@code kept}: what it keeps, "lease" or "leadership". */
  KeptStream(OpenStreams registry, ServerCallStreamObserver<R> call, String kind, String kept) {
    super(registry, call);
    this.kind = kind;
    this.kept = kept;
    this.reader = new ReaderSilence(registry.nanoClock());
    this.quorum = registry::quorum;
  }

  /** Stops renewing what the stream keeps, releasing nothing. */
  protected abstract void stopKeeping();

  /** The client cancelled or disconnected: what the stream keeps runs out at its validity. */
  @Override
  protected final void abandoned() {
    stopKeeping();
  }

  /** A request arrived (before it is looked at: even a bad one shows the client is there). */
  protected final void heard() {
    reader.heard();
  }

  /** The client asked for this ttl (a request that carried one, and was accepted). */
  protected final void ttlAsked(Duration asked) {
    if (asked != null) {
      ttl = asked;
    }
  }

  /**
   * Before a report of a renewal goes out: if the client has been silent for longer than the
   * ttl, renewals stop and the stream ends; true then, and nothing is to be sent.
   */
  protected final boolean readerGone() {
    return endIfReaderSilent(false);
  }

  /**
   * For a stream with nothing to renew (a candidate waiting to lead): whether its client has
   * been silent for longer than the ttl, although it sends a request every ttl/4 while it waits
   * (rule 10 of clients/conformance/README.md). If so, nothing is kept any more, the stream ends
   * DEADLINE_EXCEEDED, and true.
   */
  protected final boolean waitingReaderGone() {
    return endIfReaderSilent(true);
  }

  /** {@code waiting}: the stream holds nothing yet, which its end status says. */
  private boolean endIfReaderSilent(boolean waiting) {
    Duration asked = ttl;
    if (!reader.longerThan(asked)) {
      return false;
    }
    stopKeeping();
    leases().stopped(kind, LeaseMeter.READER_SILENT);
    Status gone = Status.DEADLINE_EXCEEDED.withDescription(reader.describe(asked, waiting
        ? "withdrawn from the line; it held nothing"
        : "renewals stopped; nothing was released, the " + kept + " runs out at its ttl"));
    log.debug("{} stream ends: {}", kind, gone.getDescription());
    end(gone);
    return true;
  }

  /** After a JEOPARDY answer went out: hands the stream on once too little of {@code left} remains. */
  protected final void inJeopardy(Duration left, LockEngineException cause) {
    if (HandOn.due(left, ttl)) {
      handOn(cause);
    }
  }

  /**
   * A first renewal missed the quorum: handed on once its retry has missed too, or at once when
   * this replica's node monitor sees no quorum ({@link HandOn}).
   */
  protected final void unconfirmed(LockEngineException cause) {
    boolean again;
    synchronized (this) {
      again = ++unconfirmedMisses >= HandOn.UNCONFIRMED_MISSES || !quorum.getAsBoolean();
    }
    if (again) {
      handOn(cause);
    }
  }

  /**
   * Its holder keeps the same thing through a newer stream on this replica, whose first renewal
   * held: renewals stop here, nothing is released, and this stream ends UNAVAILABLE. A client
   * opens a second stream for a grant only when it took the first for silent (rule 19 of
   * clients/conformance/README.md), goes on reading the first and ignores how it ends; renewing
   * both would double this replica's work for the grant until the old one's reader is seen gone,
   * a whole ttl (the clients cancel the old one once the new one answers, but Node cannot without
   * releasing), and a restart storm of such streams (a replica just back answers slowly, every
   * answer late makes one more stream) grew to two or three streams per grant. Not before the
   * newer stream's renewal held: a slow replica's renewal for the older one may answer first.
   */
  protected final void endSuperseded() {
    stopKeeping();
    leases().stopped(kind, LeaseMeter.SUPERSEDED);
    end(Status.UNAVAILABLE.withDescription("a newer " + kind + " stream of this " + kept
        + "'s holder keeps it on this replica now; nothing was released"));
  }

  /** Renewals stop, nothing is released, and the stream ends UNAVAILABLE: resume through another replica. */
  protected final void handOn(LockEngineException cause) {
    stopKeeping();
    leases().stopped(kind, LeaseMeter.NO_QUORUM);
    // Per stream: when a replica loses its quorum, thousands of these; NodeMonitor logs the nodes once.
    log.debug("{} stream handed on: {}", kind, cause.getMessage());
    end(HandOn.status(cause));
  }
}
