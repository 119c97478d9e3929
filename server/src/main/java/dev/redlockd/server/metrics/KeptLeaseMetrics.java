package dev.redlockd.server.metrics;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * Renewals of kept leases by outcome, kept leases lost, and kept streams the server stopped, by the
 * kind of stream keeping them.
 */
final class KeptLeaseMetrics implements LeaseMeter {
  private final Counter renewals;
  private final Counter lost;
  private final Counter stopped;

  KeptLeaseMetrics(PrometheusRegistry registry) {
    this.renewals = Counter.builder()
        .name("redlockd_kept_lease_renewals_total")
        .help("Renewals of leases kept by KeepAlive and Campaign streams: state HELD (a quorum renewed it) "
            + "or JEOPARDY (it missed the quorum, the lease is still valid and retried faster)")
        .labelNames("stream", "state")
        .withoutExemplars()
        .register(registry);
    this.lost = Counter.builder()
        .name("redlockd_kept_leases_lost_total")
        .help("Leases kept by KeepAlive and Campaign streams that were lost (taken over, expired, or quorum "
            + "gone past their validity), by the status code their stream ended with")
        .labelNames("stream", "code")
        .withoutExemplars()
        .register(registry);
    this.stopped = Counter.builder()
        .name("redlockd_kept_streams_stopped_total")
        .help("KeepAlive and Campaign streams the server ended without releasing what they keep, by reason: "
            + "reader_silent (no request from the client for longer than the ttl: renewals stop, the lease runs "
            + "out at its ttl), no_quorum (a renewal reached no quorum: the stream ends UNAVAILABLE so that the "
            + "holder resumes through another replica) or superseded (KeepAlive: the holder keeps the lease here "
            + "through a newer stream; the older ends UNAVAILABLE)")
        .labelNames("stream", "reason")
        .withoutExemplars()
        .register(registry);
    for (String stream : new String[] {"KeepAlive", "Campaign"}) {
      // Present from the start, so that rate() and the alerts see a zero rather than no series.
      renewals.labelValues(stream, "HELD");
      renewals.labelValues(stream, "JEOPARDY");
      lost.labelValues(stream, "NOT_FOUND");
      lost.labelValues(stream, "UNAVAILABLE");
      stopped.labelValues(stream, READER_SILENT);
      stopped.labelValues(stream, NO_QUORUM);
      stopped.labelValues(stream, SUPERSEDED);
    }
  }

  @Override
  public void renewed(String stream, boolean held) {
    renewals.labelValues(stream, held ? "HELD" : "JEOPARDY").inc();
  }

  @Override
  public void lost(String stream, String code) {
    lost.labelValues(stream, code).inc();
  }

  @Override
  public void stopped(String stream, String reason) {
    stopped.labelValues(stream, reason).inc();
  }
}
