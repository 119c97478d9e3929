package dev.redlockd.server;

import dev.redlockd.engine.LimitExceededException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The open KeepAlive streams of this server: enforces --max-streams and, on shutdown,
 * releases every kept lease. A concurrent set: streams open and close on gRPC and engine
 * threads alike.
 */
final class KeepAliveStreams {
  private final int max;
  private final Set<KeepAliveStream> open = ConcurrentHashMap.newKeySet();

  KeepAliveStreams(int max) {
    this.max = max;
  }

  /** Registers a stream, or throws when the limit is reached. */
  void opened(KeepAliveStream stream) {
    // Checked before adding: a burst may overshoot by the number of racing calls, which is
    // harmless for a limit that protects memory.
    if (open.size() >= max) {
      throw new LimitExceededException(max + " KeepAlive streams are already open on this server");
    }
    open.add(stream);
  }

  void closed(KeepAliveStream stream) {
    open.remove(stream);
  }

  int size() {
    return open.size();
  }

  /** Releases the lease of every open stream and ends each with UNAVAILABLE. */
  CompletableFuture<Void> shutdown() {
    return CompletableFuture.allOf(open.stream().map(KeepAliveStream::shutdown).toArray(CompletableFuture[]::new));
  }
}
