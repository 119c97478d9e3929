package dev.redlockd.server.rpc;

import dev.redlockd.engine.LimitExceededException;
import dev.redlockd.server.metrics.LeaseMeter;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The open streams of this server (KeepAlive, Campaign, Observe): enforces --max-streams and,
 * on shutdown, ends each (releasing nothing). A concurrent set: streams open and close on
 * gRPC and engine threads alike.
 */
public final class OpenStreams {
  /** A stream that shutdown must end: it stops renewing what it holds (releasing nothing) and ends with UNAVAILABLE. */
  interface OpenStream {
    public CompletableFuture<Void> shutdown();
  }

  private final int max;
  private final LeaseMeter leases;
  private final LongSupplier nanoClock;
  /** Whether this replica reaches a quorum of nodes now, as its node monitor last saw: see {@link #quorum()}. */
  private volatile BooleanSupplier quorum = () -> true;
  private final Set<OpenStream> open = ConcurrentHashMap.newKeySet();

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

  /** Registers a stream, or throws when the limit is reached. */
  void opened(OpenStream stream) {
    // Checked before adding: a burst may overshoot by the number of racing calls, which is
    // harmless for a limit that protects memory.
    if (open.size() >= max) {
      throw new LimitExceededException(max + " streams are already open on this server");
    }
    open.add(stream);
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

  /** Ends every open stream with UNAVAILABLE; what they hold runs out at its validity unless resumed elsewhere. */
  public CompletableFuture<Void> shutdown() {
    return CompletableFuture.allOf(open.stream().map(OpenStream::shutdown).toArray(CompletableFuture[]::new));
  }
}
