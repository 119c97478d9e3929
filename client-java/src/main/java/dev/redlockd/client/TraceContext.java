package dev.redlockd.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.Objects;

/**
 * Sends the caller's OpenTelemetry trace context with each call (W3C {@code traceparent} and
 * {@code tracestate} by default), so that the server's span of the call is a child of the
 * caller's. Needs {@code io.opentelemetry:opentelemetry-api} on the classpath; the client itself
 * does not: {@link LockClient.Builder#propagateTraceContext()} adds this, and only loads it then.
 *
 * <p>The context is read when the call starts, on the thread that starts it: a blocking call
 * carries the caller's context; a KeepAlive or Campaign stream carries the context of the call
 * that opened it (a reopened stream, that of the client thread that reopens it, which is none).
 */
public final class TraceContext {
  private static final TextMapSetter<Metadata> HEADERS =
      (carrier, key, value) -> carrier.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER), value);

  private TraceContext() {}

  /** The interceptor with W3C trace context. */
  public static ClientInterceptor interceptor() {
    return interceptor(W3CTraceContextPropagator.getInstance());
  }

  /** The interceptor with another propagator (say {@code openTelemetry.getPropagators().getTextMapPropagator()}). */
  public static ClientInterceptor interceptor(TextMapPropagator propagator) {
    Objects.requireNonNull(propagator, "propagator");
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            propagator.inject(Context.current(), headers, HEADERS);
            super.start(listener, headers);
          }
        };
      }
    };
  }

  /** Whether the OpenTelemetry API is on the classpath. */
  static boolean available() {
    try {
      Class.forName("io.opentelemetry.context.Context", false, TraceContext.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }
}
