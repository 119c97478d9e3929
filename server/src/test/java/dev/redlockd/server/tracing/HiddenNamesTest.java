package dev.redlockd.server.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.Test;

/** A name the policy marks sensitive goes into no span: not as an attribute, not in the status. */
class HiddenNamesTest {
  @Test
  void sensitiveNamesAreLeftOutAndSaidToBeHidden() throws Exception {
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(
        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build()).build();
    LockServiceGrpc.LockServiceImplBase refusing = new LockServiceGrpc.LockServiceImplBase() {
      @Override
      public void acquire(AcquireRequest request, StreamObserver<AcquireResponse> responses) {
        responses.onError(Status.ABORTED.withDescription("resource '" + request.getResource() + "' is held")
            .asRuntimeException());
      }
    };
    String name = InProcessServerBuilder.generateName();
    Server server = InProcessServerBuilder.forName(name)
        .addService(Tracing.with(sdk).trace(refusing.bindService(), n -> n.startsWith("payroll/"))).build().start();
    ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
    try {
      LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channel);
      for (String resource : new String[] {"payroll/2026-11", "orders/42"}) {
        assertThatThrownBy(() -> stub.acquire(AcquireRequest.newBuilder().setResource(resource).build()))
            .hasMessageContaining(resource);
      }
    } finally {
      channel.shutdownNow();
      server.shutdownNow();
    }
    SpanData hidden = spans.getFinishedSpanItems().get(0);
    SpanData shown = spans.getFinishedSpanItems().get(1);
    assertThat(hidden.getAttributes().get(RequestNames.NAME_HIDDEN)).isTrue();
    assertThat(hidden.getAttributes().get(RequestNames.RESOURCE)).isNull();
    assertThat(hidden.getAttributes() + " " + hidden.getEvents() + " " + hidden.getStatus()).doesNotContain("payroll");
    assertThat(hidden.getAttributes().get(RpcTracer.OUTCOME)).isEqualTo("held by another");
    assertThat(shown.getAttributes().get(RequestNames.RESOURCE)).isEqualTo("orders/42");
    assertThat(shown.getAttributes().get(RequestNames.NAME_HIDDEN)).isNull();
    sdk.close(); // after reading: closing the exporter forgets its spans
  }
}
