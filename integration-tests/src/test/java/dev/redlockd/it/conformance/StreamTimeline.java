package dev.redlockd.it.conformance;

import dev.redlockd.testing.Scrape;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where the kept streams were, sampled in the background while a rolling restart runs: for each
 * replica, its KeepAlive streams open and, since its start, the streams it handed on (no quorum),
 * ended for a silent reader, ended for a newer stream of the same lease, the renewals it
 * answered JEOPARDY, the new streams admission control refused, and its node requests that
 * timed out; then the nodes it counts as voting. Each line carries the wall clock too, to match
 * it with the replicas' own logs (GC, safepoints). Paced by readiness, the streams
 * one restart moves land where the clients can reach at that moment; this shows whether a replica
 * just restarted took none of them, or took them and let them go (issue 40).
 */
final class StreamTimeline implements AutoCloseable {
  private final ReplicaSet replicas;
  private final long intervalNanos;
  private final long began = System.nanoTime();
  private final List<String> lines = new ArrayList<>(); // guarded by this
  private final Thread sampler;
  private volatile boolean closed;

  StreamTimeline(ReplicaSet replicas, Duration interval) {
    this.replicas = replicas;
    this.intervalNanos = interval.toNanos();
    this.sampler = new Thread(this::run, "stream-timeline");
    sampler.setDaemon(true);
    sampler.start();
  }

  /** A moment worth placing among the samples (a signal, a replica back). */
  synchronized void mark(String what) {
    lines.add(String.format("%6d ms %s  %s", elapsedMillis(), LocalTime.now(), what));
  }

  private void run() {
    while (!closed) {
      sample();
      try {
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(intervalNanos));
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void sample() {
    List<String> each = new ArrayList<>();
    for (int i = 0; i < replicas.size(); i++) {
      try {
        Scrape s = Scrape.of(replicas.metricsPort(i));
        each.add(String.format("%4d open %3d handed on %3d reader gone %3d superseded %4d jeopardy %4d refused "
                + "%5d node timeouts %d up",
            (long) s.value("redlockd_streams_open", "kind", OpenStreams.KEEP_ALIVE),
            (long) s.value("redlockd_kept_streams_stopped_total", "stream", "KeepAlive", "reason", "no_quorum"),
            (long) s.value("redlockd_kept_streams_stopped_total", "stream", "KeepAlive", "reason", "reader_silent"),
            (long) s.value("redlockd_kept_streams_stopped_total", "stream", "KeepAlive", "reason", "superseded"),
            (long) s.value("redlockd_kept_lease_renewals_total", "stream", "KeepAlive", "state", "JEOPARDY"),
            (long) s.value("redlockd_admission_refused_total", "rpc", "KeepAlive"),
            (long) s.value("redlockd_node_errors_total", "reason", "timeout"),
            (long) s.value("redlockd_node_up")));
      } catch (RuntimeException down) {
        each.add(String.format("%-95s", "-"));
      }
    }
    mark(String.join(" | ", each));
  }

  private long elapsedMillis() {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
  }

  /** Every sample and mark so far, one a line. */
  synchronized String describe() {
    return String.join("\n", lines);
  }

  /** Stops sampling; idempotent. */
  @Override
  public void close() throws InterruptedException {
    closed = true;
    sampler.interrupt();
    sampler.join();
  }
}
