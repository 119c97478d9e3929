package dev.redlockd.server.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.ServerServiceDefinition;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Tracing costs nothing unless asked for: with no OTEL_* setting (or the SDK disabled, or the
 * traces exporter none) no SDK is made and the services are left exactly as they were, so no
 * call pays for a span and nothing is exported anywhere.
 */
class OffByDefaultTest {
  private static final ServerServiceDefinition SERVICE = new LockServiceGrpc.LockServiceImplBase() { }.bindService();

  private static Tracing from(Map<String, String> env, Properties system) {
    return Tracing.fromEnvironment(env, system);
  }

  @Test
  void withNothingSetNoSdkIsMadeAndServicesAreLeftAsTheyWere() {
    Tracing tracing = from(Map.of(), new Properties());
    assertThat(tracing.enabled()).isFalse();
    assertThat(tracing.trace(SERVICE, NameFilter.NONE)).isSameAs(SERVICE);
    assertThat(tracing.describe()).startsWith("off");
  }

  @Test
  void theSdkDisabledOrTheExporterNoneIsOffWhateverElseIsSet() {
    assertThat(from(Map.of("OTEL_SDK_DISABLED", "true", "OTEL_TRACES_EXPORTER", "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"), new Properties()).enabled()).isFalse();
    assertThat(from(Map.of("OTEL_TRACES_EXPORTER", "none", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
        new Properties()).enabled()).isFalse();
    Properties disabled = new Properties();
    disabled.setProperty("otel.sdk.disabled", "true");
    assertThat(from(Map.of("OTEL_TRACES_EXPORTER", "otlp"), disabled).enabled()).isFalse();
  }

  @Test
  void anOtlpEndpointTurnsItOnOverHttpAndTheServicesGetTheirSpans() {
    // Port 9 (discard) on loopback: nothing is sent, since no call is made.
    try (Tracing tracing = from(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"), new Properties())) {
      assertThat(tracing.enabled()).isTrue();
      assertThat(tracing.describe()).isEqualTo("on (exporter otlp)");
      assertThat(tracing.trace(SERVICE, NameFilter.NONE)).isNotSameAs(SERVICE);
    }
    Properties system = new Properties();
    system.setProperty("otel.traces.exporter", "otlp");
    system.setProperty("otel.exporter.otlp.traces.endpoint", "http://127.0.0.1:9/v1/traces");
    try (Tracing tracing = from(Map.of(), system)) {
      assertThat(tracing.enabled()).isTrue();
    }
  }
}
