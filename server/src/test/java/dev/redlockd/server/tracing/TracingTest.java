package dev.redlockd.server.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Duration;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.UntilAvailable;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The server's spans, exported to the SDK's in-memory exporter, from the real server over 3 real
 * Redis nodes (the gRPC transport in-process): a waiting Acquire's span continues the caller's
 * trace and says how long it waited, how many rounds it took and which nodes answered; a kept
 * stream's span marks its jeopardy, its return to HELD and its loss.
 */
class TracingTest {
  private static final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private static OpenTelemetrySdk sdk;
  private static RedisCluster cluster;
  private static RedlockdServer server;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() throws Exception {
    sdk = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
        .build();
    cluster = RedisCluster.start(3);
    server = RedlockdServer.start(ServerConfig.parse("--redis", cluster.redisFlag(), "--allow-force-release"),
        InProcessServerBuilder.forName("tracing"), Tracing.with(sdk));
    channel = InProcessChannelBuilder.forName("tracing").build();
  }

  @AfterAll
  static void stop() {
    if (channel != null) {
      channel.shutdownNow();
    }
    if (server != null) {
      server.close();
    }
    if (cluster != null) {
      cluster.resumeAll();
      cluster.close();
    }
    if (sdk != null) {
      sdk.close();
    }
  }

  /** What a client with OpenTelemetry does: the caller's context goes out as W3C traceparent. */
  private static Channel propagating() {
    return ClientInterceptors.intercept(channel, new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            sdk.getPropagators().getTextMapPropagator().inject(Context.current(), headers,
                (carrier, key, value) -> carrier.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER), value));
            super.start(listener, headers);
          }
        };
      }
    });
  }

  private static Duration seconds(long s) {
    return Duration.newBuilder().setSeconds(s).build();
  }

  private static SpanData span(String method, String traceId) {
    return spans.getFinishedSpanItems().stream()
        .filter(s -> s.getName().equals("redlock.v1.LockService/" + method) && s.getTraceId().equals(traceId))
        .findFirst().orElseThrow();
  }

  @Test
  void aWaitingAcquireSpanContinuesTheCallersTraceAndSaysHowLongItWaitedAndWhoAnswered() throws Exception {
    LockServiceGrpc.LockServiceBlockingStub plain = LockServiceGrpc.newBlockingStub(channel);
    AcquireResponse holder = UntilAvailable.call(() -> plain.acquire(
        AcquireRequest.newBuilder().setResource("traced/orders-42").setTtl(seconds(10)).build()));
    Span parent = sdk.getTracer("test").spanBuilder("checkout").setSpanKind(SpanKind.CLIENT).startSpan();
    CompletableFuture<AcquireResponse> waiting;
    try (Scope ignored = parent.makeCurrent()) {
      waiting = CompletableFuture.supplyAsync(Context.current().wrapSupplier(() -> LockServiceGrpc.newBlockingStub(
          propagating()).acquire(AcquireRequest.newBuilder().setResource("traced/orders-42").setTtl(seconds(10))
          .setWait(seconds(5)).build())));
    }
    // Once the engine counts it waiting, its first round was refused: the span began before now.
    await().atMost(java.time.Duration.ofSeconds(5)).until(() -> server.engine().waitingAcquires() == 1);
    long heldFor = 300;
    Thread.sleep(heldFor);
    assertThat(waiting).isNotDone();
    UntilAvailable.call(() -> plain.release(
        ReleaseRequest.newBuilder().setResource("traced/orders-42").setToken(holder.getLease().getToken()).build()));
    AcquireResponse granted = waiting.get(10, TimeUnit.SECONDS);
    parent.end();
    String traceId = parent.getSpanContext().getTraceId();
    await().atMost(java.time.Duration.ofSeconds(5)).until(() -> spans.getFinishedSpanItems().stream()
        .anyMatch(s -> s.getTraceId().equals(traceId) && s.getName().endsWith("/Acquire")));

    SpanData acquire = span("Acquire", traceId);
    print(traceId);
    assertThat(acquire.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(acquire.getParentSpanId()).isEqualTo(parent.getSpanContext().getSpanId());
    assertThat(acquire.getAttributes().get(AttributeKey.stringKey("redlockd.resource"))).isEqualTo("traced/orders-42");
    assertThat(acquire.getAttributes().get(RequestNames.WAIT_MS)).isEqualTo(5000L);
    assertThat(acquire.getAttributes().get(RpcTracer.OUTCOME)).isEqualTo("granted");
    assertThat(acquire.getAttributes().get(RpcTracer.STATUS_CODE)).isZero();
    // It waited behind the holder for at least as long as the holder kept the lock after it asked.
    assertThat(acquire.getAttributes().get(RpcTracer.WAITED_MS)).isBetween(heldFor, 5000L);
    assertThat(acquire.getAttributes().get(CallSpan.ROUNDS)).isGreaterThanOrEqualTo(2L);
    assertThat(acquire.getAttributes().get(CallSpan.NODES)).isEqualTo(3L);
    assertThat(acquire.getAttributes().get(CallSpan.NODES_ANSWERED)).hasSizeGreaterThanOrEqualTo(2)
        .allSatisfy(node -> assertThat(cluster.uris().toString()).contains(node));
    List<EventData> rounds = acquire.getEvents();
    assertThat(rounds).extracting(EventData::getName).containsOnly("round");
    assertThat(rounds.get(0).getAttributes().get(AttributeKey.booleanKey("redlockd.granted"))).isFalse();
    assertThat(rounds.get(rounds.size() - 1).getAttributes().get(AttributeKey.booleanKey("redlockd.granted")))
        .isTrue();
    assertNoToken(traceId, holder.getLease().getToken(), granted.getLease().getToken());
  }

  @Test
  void aKeptStreamsSpanMarksJeopardyItsReturnToHeldAndTheLoss() throws Exception {
    LockServiceGrpc.LockServiceBlockingStub plain = LockServiceGrpc.newBlockingStub(channel);
    AcquireResponse held = UntilAvailable.call(() -> plain.acquire(
        AcquireRequest.newBuilder().setResource("traced/kept").setTtl(seconds(3)).build()));
    LinkedBlockingQueue<Object> answers = new LinkedBlockingQueue<>();
    Span parent = sdk.getTracer("test").spanBuilder("keeper").startSpan();
    StreamObserver<KeepAliveRequest> requests;
    try (Scope ignored = parent.makeCurrent()) {
      requests = LockServiceGrpc.newStub(propagating()).keepAlive(new StreamObserver<>() {
        @Override
        public void onNext(KeepAliveResponse value) {
          answers.add(value.getState());
        }

        @Override
        public void onError(Throwable t) {
          answers.add(io.grpc.Status.fromThrowable(t).getCode());
        }

        @Override
        public void onCompleted() {
          answers.add(io.grpc.Status.Code.OK);
        }
      });
    }
    requests.onNext(KeepAliveRequest.newBuilder().setResource("traced/kept").setToken(held.getLease().getToken())
        .setTtl(seconds(3)).setSequence(1).build());
    assertThat(answers.poll(10, TimeUnit.SECONDS)).isEqualTo(LeaseState.LEASE_STATE_HELD);
    cluster.pause(0, 1);
    try {
      requests.onNext(KeepAliveRequest.newBuilder().setResource("traced/kept").setToken(held.getLease().getToken())
          .setSequence(2).build());
      assertThat(next(answers, LeaseState.LEASE_STATE_JEOPARDY)).isTrue();
    } finally {
      cluster.resume(0, 1);
    }
    requests.onNext(KeepAliveRequest.newBuilder().setResource("traced/kept").setToken(held.getLease().getToken())
        .setSequence(3).build());
    assertThat(next(answers, LeaseState.LEASE_STATE_HELD)).isTrue();
    UntilAvailable.call(() -> plain.forceRelease(
        ForceReleaseRequest.newBuilder().setResource("traced/kept").build()));
    requests.onNext(KeepAliveRequest.newBuilder().setResource("traced/kept").setToken(held.getLease().getToken())
        .setSequence(4).build());
    assertThat(next(answers, io.grpc.Status.Code.NOT_FOUND)).isTrue();
    requests.onCompleted();
    parent.end();
    String traceId = parent.getSpanContext().getTraceId();
    await().atMost(java.time.Duration.ofSeconds(5)).until(() -> spans.getFinishedSpanItems().stream()
        .anyMatch(s -> s.getTraceId().equals(traceId) && s.getName().endsWith("/KeepAlive")));
    SpanData kept = span("KeepAlive", traceId);
    assertThat(kept.getParentSpanId()).isEqualTo(parent.getSpanContext().getSpanId());
    assertThat(kept.getEvents()).extracting(EventData::getName).containsExactly("jeopardy", "resumed", "lost");
    assertThat(kept.getEvents().get(2).getAttributes().get(AttributeKey.stringKey("rpc.grpc.status_code_name")))
        .isEqualTo("NOT_FOUND");
    assertThat(kept.getAttributes().get(RpcTracer.STATUS_CODE)).isEqualTo(5L);
    assertNoToken(traceId, held.getLease().getToken());
  }

  /** Takes answers until {@code wanted} (true) or 10 s without it (false). */
  private static boolean next(LinkedBlockingQueue<Object> answers, Object wanted) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      Object answer = answers.poll(100, TimeUnit.MILLISECONDS);
      if (wanted.equals(answer)) {
        return true;
      }
    }
    return false;
  }

  private static void assertNoToken(String traceId, String... tokens) {
    for (SpanData s : spans.getFinishedSpanItems()) {
      if (!s.getTraceId().equals(traceId)) {
        continue;
      }
      String all = s.getAttributes() + " " + s.getEvents() + " " + s.getStatus();
      for (String token : tokens) {
        assertThat(all).doesNotContain(token);
      }
    }
  }

  /** The trace as the in-memory exporter holds it, for the test's output. */
  private static void print(String traceId) {
    List<SpanData> trace = new ArrayList<>(spans.getFinishedSpanItems().stream()
        .filter(s -> s.getTraceId().equals(traceId)).toList());
    trace.sort(Comparator.comparingLong(SpanData::getStartEpochNanos));
    long t0 = trace.get(0).getStartEpochNanos();
    StringBuilder out = new StringBuilder("trace " + traceId + " (in-memory exporter):\n");
    for (SpanData s : trace) {
      out.append(String.format("  %s %s span %s parent %s, +%.1f ms, %.1f ms%n", s.getKind(), s.getName(),
          s.getSpanId(), s.getParentSpanId(), (s.getStartEpochNanos() - t0) / 1e6,
          (s.getEndEpochNanos() - s.getStartEpochNanos()) / 1e6));
      s.getAttributes().forEach((k, v) -> out.append("      ").append(k.getKey()).append(" = ").append(v).append('\n'));
      for (EventData e : s.getEvents()) {
        out.append(String.format("      event %s +%.1f ms %s%n", e.getName(), (e.getEpochNanos() - t0) / 1e6,
            e.getAttributes()));
      }
    }
    System.out.print(out);
  }
}
