package dev.redlockd.server.tracing;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * One SERVER span per call, a child of the trace context the caller sent in its metadata (W3C
 * {@code traceparent}/{@code tracestate}, or whatever propagators OTEL_PROPAGATORS names), ended
 * once with the call's status: the status the service closed it with, or CANCELLED when the
 * client left first. The span is in the call's gRPC context ({@link CallSpan#current()}) for
 * the handlers, and its first request message names the resource or election
 * ({@link RequestNames}).
 */
final class RpcTracer implements ServerInterceptor {
  static final AttributeKey<Long> STATUS_CODE = AttributeKey.longKey("rpc.grpc.status_code");
  static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("redlockd.outcome");
  static final AttributeKey<Long> WAITED_MS = AttributeKey.longKey("redlockd.acquire.waited_ms");

  private static final TextMapGetter<Metadata> HEADERS = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(Metadata carrier) {
      List<String> keys = new ArrayList<>();
      for (String key : carrier.keys()) {
        if (!key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
          keys.add(key);
        }
      }
      return keys;
    }

    @Override
    public String get(Metadata carrier, String key) {
      if (carrier == null || key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
        return null;
      }
      return carrier.get(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
    }
  };

  private final Tracer tracer;
  private final TextMapPropagator propagator;
  private final NameFilter names;
  private final LongSupplier nanoClock;

  RpcTracer(OpenTelemetry openTelemetry, NameFilter names, LongSupplier nanoClock) {
    this.tracer = openTelemetry.getTracer("dev.redlockd.server");
    this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
    this.names = names;
    this.nanoClock = nanoClock;
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
      ServerCallHandler<ReqT, RespT> next) {
    MethodDescriptor<ReqT, RespT> method = call.getMethodDescriptor();
    io.opentelemetry.context.Context parent = propagator.extract(io.opentelemetry.context.Context.root(), headers,
        HEADERS);
    Span span = tracer.spanBuilder(method.getFullMethodName())
        .setParent(parent)
        .setSpanKind(SpanKind.SERVER)
        .setAttribute("rpc.system", "grpc")
        .setAttribute("rpc.service", method.getServiceName())
        .setAttribute("rpc.method", method.getBareMethodName())
        .startSpan();
    Ending ending = new Ending(span, method.getBareMethodName().equals("Acquire"), nanoClock.getAsLong());
    Context context = Context.current().withValue(CallSpan.KEY, new CallSpan(span));
    ServerCall.Listener<ReqT> listener;
    try {
      listener = Contexts.interceptCall(context, new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
        @Override
        public void close(Status status, Metadata trailers) {
          ending.end(status);
          super.close(status, trailers);
        }
      }, headers, next);
    } catch (RuntimeException e) {
      ending.end(Status.UNKNOWN.withDescription("the handler failed to start"));
      throw e;
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      private boolean first = true;

      @Override
      public void onMessage(ReqT message) {
        if (first) {
          first = false;
          RequestNames.record(message, span, names);
        }
        super.onMessage(message);
      }

      @Override
      public void onCancel() {
        ending.end(Status.CANCELLED.withDescription("the client went away"));
        super.onCancel();
      }
    };
  }

  /** Ends the span once: close and cancel may race. */
  private final class Ending {
    private final Span span;
    private final boolean acquire;
    private final long startNanos;
    private final AtomicBoolean ended = new AtomicBoolean();

    Ending(Span span, boolean acquire, long startNanos) {
      this.span = span;
      this.acquire = acquire;
      this.startNanos = startNanos;
    }

    void end(Status status) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      span.setAttribute(STATUS_CODE, (long) status.getCode().value());
      if (acquire) {
        span.setAttribute(WAITED_MS, TimeUnit.NANOSECONDS.toMillis(nanoClock.getAsLong() - startNanos));
        span.setAttribute(OUTCOME, outcome(status.getCode()));
      }
      if (!status.isOk()) {
        // The description names the resource (which may be sensitive): only the code goes in.
        span.setStatus(StatusCode.ERROR, status.getCode().name());
      }
      span.end();
    }
  }

  /** An Acquire's outcome in words. */
  static String outcome(Status.Code code) {
    return switch (code) {
      case OK -> "granted";
      case ABORTED -> "held by another";
      case UNAVAILABLE -> "no quorum";
      case DEADLINE_EXCEEDED -> "caller deadline";
      case CANCELLED -> "cancelled";
      case RESOURCE_EXHAUSTED -> "limit reached";
      default -> code.name().toLowerCase(java.util.Locale.ROOT);
    };
  }
}
