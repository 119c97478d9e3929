package dev.redlockd.client;

import io.grpc.Status;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Leading an election: held as long as its Campaign stream lives (renewed every ttl/4, like a
 * kept {@link Lease}); {@link #close()} resigns, and the next candidate, on any server, leads
 * within milliseconds. A stream that breaks (a replica restarting) is reopened with the
 * candidate's token, on any replica the channel reaches: the leadership goes on with the same
 * term if a renewal lands before its guarded deadline, and no loss is reported.
 *
 * <pre>{@code
 * CampaignOptions me = CampaignOptions.value("10.0.0.7:8080").ttl(Duration.ofSeconds(10));
 * try (Leadership leading = locks.campaign("scheduler", me)) {
 *   leading.onLost(e -> scheduler.stop());
 *   scheduler.run(leading.term()); // pass the term with every write, as a fencing token
 * }
 * }</pre>
 *
 * <p>{@link #isLeader()} follows the same local deadline and guard as {@link Lease#isValid()},
 * and the loss is reported once, before that deadline passes.
 */
public final class Leadership implements AutoCloseable {
  private final LockClient client;
  private final String election;
  private volatile long term;
  private final Campaigner stream;
  private final Lifetime lifetime;
  private volatile String value;

  Leadership(LockClient client, String election, long term, String value, Duration ttl, long deadlineNanos,
      Campaigner stream) {
    this.client = client;
    this.election = election;
    this.term = term;
    this.value = value;
    this.stream = stream;
    this.lifetime = new Lifetime(client, "leadership of election '" + election + "'", ttl, deadlineNanos,
        status -> stream.giveBack());
  }

  public String election() {
    return election;
  }

  /**
   * The leadership's fencing token: higher than every earlier leader's of this election. It
   * may rise while leading (a renewal after a node fault can report a higher fencing token),
   * never fall: read it for each write.
   */
  public long term() {
    return term;
  }

  /** The value Leader and Observe report now. */
  public String value() {
    return value;
  }

  /** True until the guard before the local deadline (unless renewed), a loss, or a resign. */
  public boolean isLeader() {
    return lifetime.isValid();
  }

  /** Time left while leading (up to the guard before the deadline); zero once not leading. */
  public Duration remaining() {
    return lifetime.remaining();
  }

  /** The local deadline on {@link System#nanoTime()}, as {@link Lease#deadlineNanos()}. */
  public long deadlineNanos() {
    return lifetime.deadlineNanos();
  }

  /**
   * Changes the value everyone sees, keeping the term; returns once the server shows it.
   *
   * @throws LeaseLostException when the leadership is already over or is lost meanwhile
   */
  public Leadership proclaim(String newValue) {
    if (!lifetime.isOpen()) {
      throw new LeaseLostException(Status.FAILED_PRECONDITION.withDescription(
          "leadership of election '" + election + "' is over"));
    }
    client.awaitCall(stream.proclaim(newValue));
    return this;
  }

  /** Called once, from a client thread, when the leadership is lost (at once if it already is). */
  public Leadership onLost(Consumer<LeaseLostException> callback) {
    lifetime.onLost(callback);
    return this;
  }

  /**
   * Resigns: the stream is half-closed and the server gives the leadership up at once.
   * Idempotent: true only on the call that resigned a leadership the server still held.
   */
  public boolean resign() {
    if (!lifetime.end() || lifetime.isLost()) {
      return false;
    }
    try {
      return client.awaitCall(stream.halfClose()).isOk();
    } catch (LockServiceException e) {
      stream.cancel("the resign got no answer");
      return false;
    }
  }

  /** Resigns; never throws (a leadership that cannot be resigned runs out by itself). */
  @Override
  public void close() {
    try {
      resign();
    } catch (LockServiceException e) {
      // Lost or unreachable: the leadership runs out at its deadline anyway.
    }
  }

  /** For a leadership granted to a caller that no longer wants it (its stream is already half-closed). */
  void abandon() {
    lifetime.end();
  }

  void renewed(long deadlineNanos) {
    lifetime.renewed(deadlineNanos);
  }

  /** What the latest answer says; called one answer at a time. */
  void shows(String currentValue, long currentTerm) {
    value = currentValue;
    if (Long.compareUnsigned(currentTerm, term) > 0) {
      term = currentTerm;
    }
  }

  void lost(Status status) {
    lifetime.lose(status);
  }

  /** Neither resigned nor lost. */
  boolean isOpen() {
    return lifetime.isOpen();
  }

  @Override
  public String toString() {
    return "Leadership[election=" + election + ", term=" + Long.toUnsignedString(term) + ", value=" + value
        + ", leader=" + isLeader() + "]";
  }
}
