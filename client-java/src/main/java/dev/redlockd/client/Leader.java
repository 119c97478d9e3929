package dev.redlockd.client;

/**
 * Who leads an election, as everyone may see it: the leader's value (what it campaigned with
 * or proclaimed) and its term, which strictly increases from one leader to the next.
 */
public record Leader(String value, long term) {
  static Leader of(dev.redlockd.proto.v1.Leadership proto) {
    return new Leader(proto.getValue(), proto.getTerm());
  }

  @Override
  public String toString() {
    return "Leader[value=" + value + ", term=" + Long.toUnsignedString(term) + "]";
  }
}
