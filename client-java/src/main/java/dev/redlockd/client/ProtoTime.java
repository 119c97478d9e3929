package dev.redlockd.client;

import java.time.Duration;

/** google.protobuf.Duration to and from java.time.Duration. */
final class ProtoTime {
  private ProtoTime() {}

  static com.google.protobuf.Duration toProto(Duration d) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }

  static Duration fromProto(com.google.protobuf.Duration d) {
    return Duration.ofSeconds(d.getSeconds(), d.getNanos());
  }
}
