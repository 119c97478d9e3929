package dev.redlockd.server.rpc;

import dev.redlockd.engine.LimitExceededException;
import dev.redlockd.server.metrics.LeaseMeter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The open streams of this server (KeepAlive, Campaign, Observe): enforces --max-streams and,
 * on shutdown, ends each (releasing nothing). A concurrent set: streams open and close on
 * gRPC and engine threads alike.
 */
public final class OpenStreams {
  private static final Logger log = LoggerFactory.getLogger(OpenStreams.class);

  /** A stream that shutdown must end: it stops renewing what it holds (releasing nothing) and ends with UNAVAILABLE. */
  interface OpenStream {
    public CompletableFuture<Void> shutdown();

    /** A periodic look ({@link #sweepEvery}): a stream whose client is gone, and that nothing else checks, ends here. */
    default void sweep() {}
  }

  /** The fewest streams a shutdown ends at once ({@link #shutdown(ScheduledExecutorService, Duration)}). */
  static final int WAVE = 50;
  /** The most waves a shutdown ends its streams in: the last ends (MAX_WAVES - 1) * WAVE_GAP after the first. */
  static final int MAX_WAVES = 10;
  /** Between two waves: a round of first renewals on the replicas that take the wave before. */
  static final Duration WAVE_GAP = Duration.ofMillis(100);

  private final int max;
  private final LeaseMeter leases;
  private final LongSupplier nanoClock;
  /** Whether this replica reaches a quorum of nodes now, as its node monitor last saw: see {@link #quorum()}. */
  private volatile BooleanSupplier quorum = () -> true;
  private final Set<OpenStream> open = ConcurrentHashMap.newKeySet();
  private volatile ScheduledFuture<?> sweeping;
  /** Set before a shutdown takes its list of streams: a stream opened after that is ended on arrival. */
  private volatile boolean shuttingDown;

  public OpenStreams(int max) {
    this(max, LeaseMeter.NONE);
  }

  /** {@code leases} counts the renewals and losses of what the streams keep. */
  public OpenStreams(int max, LeaseMeter leases) {
    this(max, leases, System::nanoTime);
  }

  /** {@code nanoClock} times the silence of each stream's client (tests move it by hand). */
  public OpenStreams(int max, LeaseMeter leases, LongSupplier nanoClock) {
    this.max = max;
    this.leases = leases;
    this.nanoClock = nanoClock;
  }

  LeaseMeter leases() {
    return leases;
  }

  /**
   * Where this replica learns whether it reaches a quorum of nodes now (the engine's node
   * monitor): a kept stream whose first renewal misses while it does not is handed on at once
   * ({@link HandOn}).
   * Until this is called, every stream is taken on.
   */
  public void quorumFrom(BooleanSupplier quorum) {
    this.quorum = quorum;
  }

  /** Whether this replica reaches a quorum of nodes now. */
  boolean quorum() {
    return quorum.getAsBoolean();
  }

  LongSupplier nanoClock() {
    return nanoClock;
  }

  /**
   * Registers a stream, or throws when the limit is reached. A stream that arrives once a
   * shutdown has begun is ended at once, as the shutdown ends the others (UNAVAILABLE, nothing
   * released): a client that opened it before the server's GOAWAY reached it resumes elsewhere
   * now, and the shutdown does not wait out its grace period for a stream it never listed (a
   * replica took 11 s to stop under a rolling restart for one such stream).
   */
  void opened(OpenStream stream) {
    // Checked before adding: a burst may overshoot by the number of racing calls, which is
    // harmless for a limit that protects memory.
    if (open.size() >= max) {
      throw new LimitExceededException(max + " streams are already open on this server");
    }
    open.add(stream);
    // Added before the flag is read, and the flag set before a shutdown copies the set: each
    // stream is either in the shutdown's list or sees the flag here (or both: ending is idempotent).
    if (shuttingDown) {
      stream.shutdown();
    }
  }

  /**
   * Looks at every open stream every {@code every} ({@link OpenStream#sweep}) until shutdown. A
   * kept stream's renewals check its client's silence each time they report; a candidate still
   * waiting to lead has no renewals, and a client that left it over a connection that stays open
   * (a proxy that stopped forwarding) would otherwise keep it in line, to be elected for nobody.
   */
  public void sweepEvery(ScheduledExecutorService scheduler, Duration every) {
    long nanos = every.toNanos();
    sweeping = scheduler.scheduleWithFixedDelay(this::sweep, nanos, nanos, TimeUnit.NANOSECONDS);
  }

  void sweep() {
    for (OpenStream stream : open) {
      try {
        stream.sweep();
      } catch (RuntimeException e) {
        // One stream's failure must not end the schedule (a periodic task that throws is not run again).
        log.warn("looking at an open stream failed", e);
      }
    }
  }

  private void stopSweeping() {
    ScheduledFuture<?> s = sweeping;
    if (s != null) {
      s.cancel(false);
    }
  }

  void closed(OpenStream stream) {
    open.remove(stream);
  }

  public int size() {
    return open.size();
  }

  /** The open streams by kind (KeepAlive, Campaign, Observe, each present), for the metrics and the shutdown log. */
  public java.util.Map<String, Long> byKind() {
    java.util.Map<String, Long> kinds = new java.util.LinkedHashMap<>();
    for (String kind : java.util.List.of("KeepAlive", "Campaign", "Observe")) {
      kinds.put(kind, 0L);
    }
    for (OpenStream stream : open) {
      kinds.merge(stream.getClass().getSimpleName().replaceFirst("Stream$", ""), 1L, Long::sum);
    }
    return kinds;
  }

  /** The open streams by kind, for the shutdown log: "2 KeepAlive, 0 Campaign, 1 Observe". */
  public String describe() {
    java.util.Map<String, Long> kinds = byKind();
    StringBuilder out = new StringBuilder();
    kinds.forEach((kind, n) -> out.append(out.isEmpty() ? "" : ", ").append(n).append(' ').append(kind));
    return out.toString();
  }

  /** Ends every open stream with UNAVAILABLE at once; what they hold runs out at its validity unless resumed elsewhere. */
  public CompletableFuture<Void> shutdown() {
    stopSweeping();
    shuttingDown = true;
    return end(List.copyOf(open));
  }

  /**
   * Ends every open stream with UNAVAILABLE, in waves of at least {@link #WAVE} streams,
   * {@link #WAVE_GAP} apart on {@code scheduler}, at most {@link #MAX_WAVES} of them; each stream
   * is renewed until its own end, and nothing is released. Every stream moved by one restart
   * lands on the replicas the clients reach at that moment, so under a rolling restart paced by
   * readiness one replica came to carry nearly all of them, and its own SIGTERM moved them all
   * at once onto a replica just restarted: the first renewals of 500 resumed leases took it
   * 1.8 s, later than the deadlines the clients already had, and every lease was lost (issue
   * 40). In waves, each lands on a replica that has served the one before, and the replica just
   * restarted, which the clients reconnect to as the first ends reach them, takes its share.
   * Up to {@code WAVE} streams end at once, as they always did: 100 kept leases moving at once
   * were kept. The waves take no more than half of {@code within} (the shutdown's grace).
   */
  public CompletableFuture<Void> shutdown(ScheduledExecutorService scheduler, Duration within) {
    stopSweeping();
    shuttingDown = true;
    List<OpenStream> all = new ArrayList<>(open);
    int waves = Math.min(MAX_WAVES, Math.max(1, (all.size() + WAVE - 1) / WAVE));
    long gapNanos = waves == 1 ? 0 : Math.min(WAVE_GAP.toNanos(), within.toNanos() / 2 / (waves - 1));
    List<CompletableFuture<Void>> ends = new ArrayList<>();
    for (int w = 0; w < waves; w++) {
      List<OpenStream> wave = all.subList(all.size() * w / waves, all.size() * (w + 1) / waves);
      if (w == 0) {
        ends.add(end(wave));
        continue;
      }
      CompletableFuture<Void> ended = new CompletableFuture<>();
      Runnable endWave = () -> end(wave).whenComplete((v, e) -> ended.complete(null));
      scheduler.schedule(endWave, gapNanos * w, TimeUnit.NANOSECONDS);
      ends.add(ended);
    }
    return CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new));
  }

  private static CompletableFuture<Void> end(List<OpenStream> streams) {
    return CompletableFuture.allOf(streams.stream().map(OpenStream::shutdown).toArray(CompletableFuture[]::new));
  }
}
