package dev.redlockd.election;

import java.util.Optional;

/**
 * What a server tells the others when an election changes, through the nodes' pub/sub:
 * {@code L <term> <seq> <value>} when a leader begins (seq 0) or proclaims a new value (seq
 * 1, 2, ... within its term), {@code V <term>} when the leadership of that term ended. The
 * value comes last, so it may hold any character.
 */
record Announcement(long term, long seq, Leader leader) {

  static Announcement leading(Leader leader, long seq) {
    return new Announcement(leader.term(), seq, leader);
  }

  static Announcement vacant(long term) {
    return new Announcement(term, Long.MAX_VALUE, null);
  }

  boolean vacancy() {
    return leader == null;
  }

  String encode() {
    return vacancy() ? "V " + Long.toUnsignedString(term) : "L " + Long.toUnsignedString(term) + " " + seq + " " + leader.value();
  }

  /** Empty for anything that is not an announcement (another version's, or garbage): ignored. */
  static Optional<Announcement> decode(String payload) {
    try {
      if (payload.startsWith("V ")) {
        return Optional.of(vacant(Long.parseUnsignedLong(payload.substring(2))));
      }
      if (payload.startsWith("L ")) {
        String[] parts = payload.split(" ", 4);
        if (parts.length == 4) {
          long term = Long.parseUnsignedLong(parts[1]);
          long seq = Long.parseLong(parts[2]);
          if (seq >= 0 && seq != Long.MAX_VALUE) {
            return Optional.of(leading(new Leader(parts[3], term), seq));
          }
        }
      }
    } catch (NumberFormatException e) {
      // falls through: not one of ours
    }
    return Optional.empty();
  }
}
