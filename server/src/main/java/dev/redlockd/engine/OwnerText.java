package dev.redlockd.engine;

/**
 * What a lock's value stores after its header line: the owner text, preceded by the identity
 * of the caller that took the lock when the server knows one (under an access policy), so that
 * Describe on any replica can say who holds it.
 *
 * <p>Stored as {@code <RS><identity><RS><owner>} (RS = U+001E); a plain owner text when there
 * is no identity, so a lock taken without a policy stores exactly what it did before. An owner
 * text that itself begins with RS is always stored with the (empty) identity part, so no caller
 * can pass off its owner text as someone's identity.
 */
final class OwnerText {
  static final char MARK = '\u001e';

  record Parsed(String holder, String owner) {}

  private OwnerText() {}

  static String store(String owner, String holder) {
    if (holder.isEmpty() && (owner.isEmpty() || owner.charAt(0) != MARK)) {
      return owner;
    }
    return MARK + holder.replace(MARK, '\ufffd') + MARK + owner;
  }

  static Parsed parse(String stored) {
    if (stored.isEmpty() || stored.charAt(0) != MARK) {
      return new Parsed("", stored);
    }
    int end = stored.indexOf(MARK, 1);
    if (end < 0) {
      return new Parsed("", stored); // not written by store(): shown as it is
    }
    return new Parsed(stored.substring(1, end), stored.substring(end + 1));
  }
}
