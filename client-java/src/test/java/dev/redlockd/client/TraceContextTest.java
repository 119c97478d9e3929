package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** With propagateTraceContext, each call carries the caller's trace context as W3C traceparent. */
class TraceContextTest {
  private static final Metadata.Key<String> TRACEPARENT =
      Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
  private final FakeLockService fake = new FakeLockService();
  private final List<String> seen = new CopyOnWriteArrayList<>();
  private Server server;
  private ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    String name = InProcessServerBuilder.generateName();
    ServerInterceptor recorder = new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        Iterable<String> values = headers.getAll(TRACEPARENT);
        seen.add(values == null ? "none" : String.join(" + ", values));
        return next.startCall(call, headers);
      }
    };
    server = InProcessServerBuilder.forName(name).addService(ServerInterceptors.intercept(fake, recorder)).build()
        .start();
    channel = InProcessChannelBuilder.forName(name).build();
  }

  @AfterEach
  void stop() {
    channel.shutdownNow();
    server.shutdownNow();
  }

  @Test
  void eachCallCarriesTheCallersTraceContext() {
    LockClient traced = LockClient.builder(channel).propagateTraceContext().build();
    SpanContext caller = SpanContext.create("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331",
        TraceFlags.getSampled(), TraceState.getDefault());
    try (Scope ignored = Span.wrap(caller).makeCurrent()) {
      traced.acquire("traced", LockOptions.ttl(Duration.ofSeconds(10))).release();
    }
    // Acquire and Release, each with the one header.
    assertThat(seen).containsExactly("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  }

  @Test
  void withoutItOrWithoutACurrentSpanNothingIsSent() {
    LockClient.create(channel).acquire("plain", LockOptions.ttl(Duration.ofSeconds(10))).release();
    LockClient.builder(channel).propagateTraceContext().build()
        .acquire("no-span", LockOptions.ttl(Duration.ofSeconds(10))).release();
    assertThat(seen).hasSize(4).containsOnly("none");
  }
}
