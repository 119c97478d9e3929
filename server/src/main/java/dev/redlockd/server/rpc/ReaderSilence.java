package dev.redlockd.server.rpc;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * When the client of a kept stream (KeepAlive, Campaign) last sent a request, and whether it
 * has been silent for longer than it could still rely on a renewal. A client counts its
 * deadline from the send time of the request an answer echoes, plus a validity below the ttl:
 * once no request has arrived for longer than the ttl, no renewal can move anything its client
 * believes. The reader is gone (dead, frozen, cut off by a partition that left the connection
 * open), and renewing on would only keep the lease from everyone else. Stopping frees nothing:
 * the lease runs out at its ttl, after the client's own deadline.
 */
final class ReaderSilence {
  private final LongSupplier nanoClock;
  private volatile long lastRequestNanos;

  ReaderSilence(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    this.lastRequestNanos = nanoClock.getAsLong();
  }

  /** A request arrived. */
  void heard() {
    lastRequestNanos = nanoClock.getAsLong();
  }

  /** Whether no request has arrived for longer than {@code ttl}. */
  boolean longerThan(Duration ttl) {
    return ttl != null && silentNanos() > ttl.toNanos();
  }

  /** For the stream's end status: how long the client has been silent, against what, and {@code what} followed. */
  String describe(Duration ttl, String what) {
    return "no request from the client for " + TimeUnit.NANOSECONDS.toMillis(silentNanos())
        + " ms, longer than the ttl (" + ttl.toMillis() + " ms): " + what;
  }

  private long silentNanos() {
    return nanoClock.getAsLong() - lastRequestNanos;
  }
}
