package dev.redlockd.server.tracing;

import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.LongSupplier;

/**
 * The server's traces: a span per LockService and ElectionService call, continuing the
 * caller's trace context. Configured by the standard OTEL_* environment variables (or otel.*
 * system properties) through the OpenTelemetry SDK's autoconfiguration, and off unless they name
 * an exporter: with nothing set (or OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none) no SDK
 * is made, no interceptor is installed, nothing is exported and no network endpoint is tried.
 *
 * <p>When on, only traces are exported (OTEL_METRICS_EXPORTER and OTEL_LOGS_EXPORTER default to
 * none here: the server's metrics are Prometheus'), the service name defaults to redlockd, and
 * OTLP defaults to http/protobuf (the server jar carries the JDK HTTP sender, not gRPC's).
 */
public final class Tracing implements AutoCloseable {
  private static final Tracing OFF = new Tracing(null, null, "off (no OTEL_TRACES_EXPORTER or "
      + "OTEL_EXPORTER_OTLP[_TRACES]_ENDPOINT set)");

  private final OpenTelemetry openTelemetry;
  private final OpenTelemetrySdk sdk; // null unless this made it
  private final String description;

  private Tracing(OpenTelemetry openTelemetry, OpenTelemetrySdk sdk, String description) {
    this.openTelemetry = openTelemetry;
    this.sdk = sdk;
    this.description = description;
  }

  public static Tracing off() {
    return OFF;
  }

  /** Traces through {@code openTelemetry} (tests give one with an in-memory exporter). */
  public static Tracing with(OpenTelemetry openTelemetry) {
    return new Tracing(openTelemetry, null, "on (given)");
  }

  /**
   * From the OTEL_* variables and otel.* system properties, as the SDK reads them: off unless an
   * exporter is named (OTEL_TRACES_EXPORTER other than none, or an OTLP endpoint), and off when
   * OTEL_SDK_DISABLED is true.
   */
  public static Tracing fromEnvironment(Map<String, String> env, Properties system) {
    if (Boolean.parseBoolean(setting(env, system, "otel.sdk.disabled"))) {
      return new Tracing(null, null, "off (OTEL_SDK_DISABLED=true)");
    }
    String exporter = setting(env, system, "otel.traces.exporter");
    boolean endpoint = setting(env, system, "otel.exporter.otlp.endpoint") != null
        || setting(env, system, "otel.exporter.otlp.traces.endpoint") != null;
    if (exporter == null ? !endpoint : exporter.strip().equalsIgnoreCase("none")) {
      return exporter == null ? OFF : new Tracing(null, null, "off (OTEL_TRACES_EXPORTER=none)");
    }
    OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
        .addPropertiesSupplier(() -> Map.of(
            "otel.service.name", "redlockd",
            "otel.metrics.exporter", "none",
            "otel.logs.exporter", "none",
            "otel.exporter.otlp.protocol", "http/protobuf"))
        .disableShutdownHook() // closed with the server, after its last calls
        .build()
        .getOpenTelemetrySdk();
    return new Tracing(sdk, sdk, "on (exporter " + (exporter == null ? "otlp" : exporter.strip()) + ")");
  }

  /** An OTEL_* variable, else its otel.* system property (the SDK's own order), or null. */
  private static String setting(Map<String, String> env, Properties system, String property) {
    String fromSystem = system.getProperty(property);
    if (fromSystem != null && !fromSystem.isBlank()) {
      return fromSystem;
    }
    String fromEnv = env.get(property.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_'));
    return fromEnv == null || fromEnv.isBlank() ? null : fromEnv;
  }

  public boolean enabled() {
    return openTelemetry != null;
  }

  /** For the start-up log line. */
  public String describe() {
    return description;
  }

  /** The service with a span per call, the names in them filtered by {@code names}; as it was when off. */
  public ServerServiceDefinition trace(ServerServiceDefinition service, NameFilter names) {
    return trace(service, names, System::nanoTime);
  }

  ServerServiceDefinition trace(ServerServiceDefinition service, NameFilter names, LongSupplier nanoClock) {
    if (openTelemetry == null) {
      return service;
    }
    return ServerInterceptors.intercept(service, new RpcTracer(openTelemetry, names, nanoClock));
  }

  /** Exports what is left and stops the SDK this made (nothing for one given). */
  @Override
  public void close() {
    if (sdk != null) {
      sdk.close();
    }
  }
}
