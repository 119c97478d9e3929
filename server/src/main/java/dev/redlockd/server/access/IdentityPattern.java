package dev.redlockd.server.access;

/**
 * Which callers a policy entry speaks for: one identity exactly ({@code spiffe://corp/team-a/api}),
 * every identity under a prefix ({@code spiffe://corp/team-a/*}: the star must be last and alone
 * after its prefix, so a pattern never means two things), or everyone ({@code *}).
 */
record IdentityPattern(String text) {
  IdentityPattern {
    if (text.isEmpty()) {
      throw new IllegalArgumentException("an identity pattern is empty");
    }
    int star = text.indexOf('*');
    if (star >= 0 && star != text.length() - 1) {
      throw new IllegalArgumentException(
          "identity pattern '" + text + "': '*' may only end the pattern");
    }
  }

  boolean isWildcard() {
    return text.endsWith("*");
  }

  /** Characters before the star: longer means more specific. */
  String prefix() {
    return isWildcard() ? text.substring(0, text.length() - 1) : text;
  }

  boolean matches(String identity) {
    return isWildcard() ? identity.startsWith(prefix()) : identity.equals(text);
  }
}
