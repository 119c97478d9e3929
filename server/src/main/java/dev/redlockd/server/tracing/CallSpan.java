package dev.redlockd.server.tracing;

import dev.redlockd.engine.AcquireObserver;
import dev.redlockd.server.metrics.LeaseMeter;
import io.grpc.Context;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import java.util.List;

/**
 * The span of the call the current gRPC context belongs to, for the handlers and streams to
 * write what only they know: an Acquire's rounds (through the engine's {@link AcquireObserver}),
 * a kept stream's jeopardy, loss and return to HELD. {@link #NONE} when tracing is off (or the
 * call is not traced): every method then does nothing and allocates nothing.
 *
 * <p>What it writes names no token, and no resource or election (a name in a message could be
 * one the access policy marks sensitive): the names are set once, by {@link RpcTracer}, from the
 * request, under the policy.
 */
public final class CallSpan {
  /** Does nothing. */
  public static final CallSpan NONE = new CallSpan(null);

  static final Context.Key<CallSpan> KEY = Context.key("redlockd-call-span");

  static final AttributeKey<Long> ROUNDS = AttributeKey.longKey("redlockd.acquire.rounds");
  static final AttributeKey<List<String>> NODES_ANSWERED =
      AttributeKey.stringArrayKey("redlockd.acquire.nodes_answered");
  static final AttributeKey<Long> NODES = AttributeKey.longKey("redlockd.acquire.nodes");
  private static final AttributeKey<Long> ROUND = AttributeKey.longKey("redlockd.round");
  private static final AttributeKey<Long> ANSWERED = AttributeKey.longKey("redlockd.nodes_answered");
  private static final AttributeKey<Boolean> GRANTED = AttributeKey.booleanKey("redlockd.granted");
  /** Why the server stopped renewing a stream's lease, releasing nothing ({@link LeaseMeter#stopped}). */
  private static final AttributeKey<String> REASON = AttributeKey.stringKey("redlockd.reason");
  private static final AttributeKey<String> CODE = AttributeKey.stringKey("rpc.grpc.status_code_name");

  private final Span span;
  /** A kept stream's last renewal said JEOPARDY: the next HELD is a return, worth an event. */
  private volatile boolean inJeopardy;

  CallSpan(Span span) {
    this.span = span;
  }

  /** The span of the call being handled on this thread, or {@link #NONE}. */
  public static CallSpan current() {
    CallSpan s = KEY.get();
    return s == null ? NONE : s;
  }

  /** What the engine tells of an Acquire's rounds: an event per round, and the last round's nodes. */
  public AcquireObserver acquireObserver() {
    if (span == null) {
      return AcquireObserver.NONE;
    }
    return new AcquireObserver() {
      @Override
      public void roundEnded(int round, List<String> answered, int nodes, boolean granted) {
        span.addEvent("round", Attributes.of(ROUND, (long) round, ANSWERED, (long) answered.size(), GRANTED,
            granted));
        span.setAttribute(ROUNDS, (long) round);
        span.setAttribute(NODES_ANSWERED, answered);
        span.setAttribute(NODES, (long) nodes);
      }
    };
  }

  /**
   * {@code meter}, also marking this span with what happens to the lease or leadership its
   * stream keeps: {@link #jeopardy()}, {@link #held()}, {@link #lost}. {@code meter} itself when
   * not traced.
   */
  public LeaseMeter marking(LeaseMeter meter) {
    if (span == null) {
      return meter;
    }
    return new LeaseMeter() {
      @Override
      public void renewed(String stream, boolean held) {
        meter.renewed(stream, held);
        if (held) {
          held();
        } else {
          jeopardy();
        }
      }

      @Override
      public void lost(String stream, String code) {
        meter.lost(stream, code);
        CallSpan.this.lost(Status.Code.valueOf(code));
      }

      @Override
      public void stopped(String stream, String reason) {
        meter.stopped(stream, reason);
        span.addEvent("stopped", Attributes.of(REASON, reason));
      }
    };
  }

  /** A renewal reached a quorum: after a jeopardy, the event {@code resumed}. */
  public void held() {
    if (span != null && inJeopardy) {
      inJeopardy = false;
      span.addEvent("resumed");
    }
  }

  /** A renewal reached no quorum; validity remains (the event {@code jeopardy}, once per spell). */
  public void jeopardy() {
    if (span != null && !inJeopardy) {
      inJeopardy = true;
      span.addEvent("jeopardy");
    }
  }

  /** What the stream kept is lost; the stream ends with {@code code} (the event {@code lost}). */
  public void lost(Status.Code code) {
    if (span != null) {
      span.addEvent("lost", Attributes.of(CODE, code.name()));
    }
  }
}
