package dev.redlockd.server.access;

/** Names that callers chose (resources, identities), made safe to put in a log line or a status. */
public final class Printable {

  private Printable() {
  }

  /** Control characters in a caller's name would forge log lines: they are escaped. */
  public static String of(String text) {
    StringBuilder out = new StringBuilder(text.length());
    text.codePoints().forEach(c -> {
      if (Character.isISOControl(c)) {
        out.append(String.format("\\u%04x", c));
      } else {
        out.appendCodePoint(c);
      }
    });
    return out.toString();
  }
}
