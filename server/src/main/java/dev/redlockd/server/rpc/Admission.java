package dev.redlockd.server.rpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Admission control: while the engine runs behind (its rounds wait longer than {@code bound}
 * for a quorum of nodes, see {@link dev.redlockd.engine.Backlog}), new work is refused at once
 * with UNAVAILABLE and a {@code grpc-retry-pushback-ms} trailer, instead of being taken on and
 * timed out. Taking it on would make every call slower, the renewals of the streams already
 * open included: past the node timeout those fail, and a server that opens streams faster than
 * it can renew them ends up losing the leases it already keeps.
 *
 * <p>Only what adds load is refused: a new Acquire call and a new KeepAlive stream. Renewals of
 * open streams, Extend, Release, ForceRelease and Describe are never refused here: refusing a
 * renewal could lose a lease, refusing a release would keep one held longer.
 *
 * <p>A new KeepAlive stream usually comes from a holder whose lease is already granted and
 * running out (a restart storm: the holders of a replica that restarted come back through the
 * others), while a new Acquire has nothing to lose by waiting: so streams are refused only past
 * twice the bound, and told to come back sooner (at most {@link #MAX_STREAM_PUSHBACK}, twice
 * that with the spread), so that a refused holder can try again well within a lease of seconds.
 *
 * <p>The pushback is drawn at random from {@code [p, 2p)}, where {@code p} is four times how
 * late the rounds run for an Acquire, twice for a stream (at least the node timeout, at most
 * the cap): the deeper the backlog, the longer the wait, and the refused callers come back
 * spread over a window as long as the wait itself rather than all at once.
 */
public final class Admission {
  /** The trailer gRPC defines for "retry after this many milliseconds"; grpc-java's retries honour it too. */
  public static final Metadata.Key<String> PUSHBACK =
      Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);
  static final Duration MAX_PUSHBACK = Duration.ofSeconds(2);
  static final Duration MAX_STREAM_PUSHBACK = Duration.ofMillis(250);

  /** What is asked for: a new lease, or renewals of a lease its caller may already hold. */
  enum Call {
    ACQUIRE("Acquire", 1, 4, MAX_PUSHBACK),
    KEEP_ALIVE("KeepAlive", 2, 2, MAX_STREAM_PUSHBACK);

    final String rpc;
    final int boundFactor;
    final int pushbackPerLateness;
    final Duration maxPushback;

    Call(String rpc, int boundFactor, int pushbackPerLateness, Duration maxPushback) {
      this.rpc = rpc;
      this.boundFactor = boundFactor;
      this.pushbackPerLateness = pushbackPerLateness;
      this.maxPushback = maxPushback;
    }
  }

  private final Supplier<Duration> lateness;
  private final Duration bound;
  private final Duration nodeTimeout;
  private final Random random;
  private final Consumer<String> refused;

  /**
   * @param lateness how late the engine's rounds run now
   * @param bound past it, new work is refused; zero turns admission control off
   * @param refused told the RPC of each refusal (a metric)
   */
  public Admission(Supplier<Duration> lateness, Duration bound, Duration nodeTimeout, Random random,
      Consumer<String> refused) {
    this.lateness = lateness;
    this.bound = bound;
    this.nodeTimeout = nodeTimeout;
    this.random = random;
    this.refused = refused;
  }

  /** Admits everything: for servers built without an engine behind them (tests). */
  public static Admission off() {
    return new Admission(() -> Duration.ZERO, Duration.ZERO, Duration.ofMillis(50), new Random(), rpc -> { });
  }

  /** Null when the call may go ahead, else the error to end it with at once. */
  StatusRuntimeException refusal(Call call) {
    if (bound.isZero()) {
      return null;
    }
    Duration late = lateness.get();
    Duration limit = bound.multipliedBy(call.boundFactor);
    if (late.compareTo(limit) <= 0) {
      return null;
    }
    long pushbackMs = pushbackMillis(call, late);
    refused.accept(call.rpc);
    Metadata trailers = new Metadata();
    trailers.put(PUSHBACK, Long.toString(pushbackMs));
    return Status.UNAVAILABLE.withDescription("redlockd is overloaded: its Redis rounds wait "
            + late.toMillis() + "ms for a quorum (admission bound " + limit.toMillis() + "ms); nothing was "
            + "done: retry after " + pushbackMs + "ms (the grpc-retry-pushback-ms trailer)")
        .asRuntimeException(trailers);
  }

  /** Drawn from [p, 2p), p = k x lateness, clamped to [node timeout, the call's cap]. */
  long pushbackMillis(Call call, Duration late) {
    long p = Math.min(call.maxPushback.toMillis(),
        Math.max(nodeTimeout.toMillis(), call.pushbackPerLateness * late.toMillis()));
    p = Math.max(1, p);
    return p + (long) (random.nextDouble() * p);
  }
}
