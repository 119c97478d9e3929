package dev.redlockd.server.rpc;

import dev.redlockd.engine.InvalidRequestException;
import java.time.Duration;

/** google.protobuf.Duration to and from java.time.Duration, rejecting malformed values. */
final class ProtoDurations {
  private static final long MAX_NANOS = 999_999_999L;
  /** The range google.protobuf.Duration allows: about 10,000 years either way. */
  private static final long MAX_SECONDS = 315_576_000_000L;

  private ProtoDurations() {}

  static Duration fromProto(String resource, String field, com.google.protobuf.Duration d) {
    long seconds = d.getSeconds();
    int nanos = d.getNanos();
    boolean nanosInRange = nanos >= -MAX_NANOS && nanos <= MAX_NANOS;
    boolean signsAgree = seconds == 0 || nanos == 0 || (seconds < 0) == (nanos < 0);
    boolean secondsInRange = seconds >= -MAX_SECONDS && seconds <= MAX_SECONDS;
    if (!nanosInRange || !signsAgree || !secondsInRange) {
      throw new InvalidRequestException("resource '" + resource + "': " + field + " is not a valid Duration");
    }
    return Duration.ofSeconds(seconds, nanos);
  }

  static com.google.protobuf.Duration toProto(Duration d) {
    return com.google.protobuf.Duration.newBuilder()
        .setSeconds(d.getSeconds())
        .setNanos(d.getNano())
        .build();
  }
}
