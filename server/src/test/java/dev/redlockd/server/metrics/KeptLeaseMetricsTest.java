package dev.redlockd.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.Scrape;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The counters of kept leases and the gauges of streams by kind and of the node timeout, as scraped. */
class KeptLeaseMetricsTest {
  private final PrometheusRegistry registry = new PrometheusRegistry();

  @Test
  void renewalsCountByStreamAndStateAndLossesByCode() throws IOException {
    LeaseMeter meter = new KeptLeaseMetrics(registry);
    Scrape before = scrape();
    assertThat(before.has("redlockd_kept_lease_renewals_total")).isTrue();
    assertThat(before.value("redlockd_kept_leases_lost_total", "stream", "KeepAlive", "code", "NOT_FOUND")).isZero();

    meter.renewed("KeepAlive", true);
    meter.renewed("KeepAlive", true);
    meter.renewed("KeepAlive", false);
    meter.renewed("Campaign", true);
    meter.lost("KeepAlive", "UNAVAILABLE");

    Scrape after = scrape();
    assertThat(after.value("redlockd_kept_lease_renewals_total", "stream", "KeepAlive", "state", "HELD")).isEqualTo(2);
    assertThat(after.value("redlockd_kept_lease_renewals_total", "stream", "KeepAlive", "state", "JEOPARDY")).isEqualTo(1);
    assertThat(after.value("redlockd_kept_lease_renewals_total", "stream", "Campaign", "state", "HELD")).isEqualTo(1);
    assertThat(after.value("redlockd_kept_leases_lost_total", "stream", "KeepAlive", "code", "UNAVAILABLE")).isEqualTo(1);
    assertThat(after.value("redlockd_kept_leases_lost_total", "stream", "Campaign", "code", "UNAVAILABLE")).isZero();
  }

  @Test
  void streamsTheServerStoppedCountByStreamAndReason() throws IOException {
    LeaseMeter meter = new KeptLeaseMetrics(registry);
    assertThat(scrape().value("redlockd_kept_streams_stopped_total", "stream", "Campaign", "reason",
        LeaseMeter.NO_QUORUM)).isZero();

    meter.stopped("KeepAlive", LeaseMeter.READER_SILENT);
    meter.stopped("Campaign", LeaseMeter.NO_QUORUM);
    meter.stopped("Campaign", LeaseMeter.NO_QUORUM);

    Scrape after = scrape();
    assertThat(after.value("redlockd_kept_streams_stopped_total", "stream", "KeepAlive", "reason", "reader_silent"))
        .isEqualTo(1);
    assertThat(after.value("redlockd_kept_streams_stopped_total", "stream", "KeepAlive", "reason", "no_quorum"))
        .isZero();
    assertThat(after.value("redlockd_kept_streams_stopped_total", "stream", "Campaign", "reason", "no_quorum"))
        .isEqualTo(2);
  }

  @Test
  void streamsAreGaugedByKindAndTheNodeTimeoutInSeconds() throws IOException {
    Map<String, Long> kinds = new LinkedHashMap<>(Map.of("KeepAlive", 3L, "Campaign", 1L, "Observe", 0L));
    EngineGauges.registerStreams(registry, () -> kinds, Duration.ofMillis(50));

    Scrape s = scrape();
    assertThat(s.value("redlockd_streams_open", "kind", "KeepAlive")).isEqualTo(3);
    assertThat(s.value("redlockd_streams_open", "kind", "Campaign")).isEqualTo(1);
    assertThat(s.value("redlockd_streams_open", "kind", "Observe")).isZero();
    assertThat(s.value("redlockd_node_timeout_seconds")).isEqualTo(0.05);

    kinds.put("Observe", 2L);
    assertThat(scrape().value("redlockd_streams_open", "kind", "Observe")).isEqualTo(2);
  }

  @Test
  void aServerWithoutMetricsCountsNothing() {
    assertThat(Metrics.off().leases()).isSameAs(LeaseMeter.NONE);
  }

  private Scrape scrape() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new PrometheusTextFormatWriter(false).write(out, registry.scrape());
    return Scrape.parse(out.toString(StandardCharsets.UTF_8));
  }
}
