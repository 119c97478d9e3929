package dev.redlockd.sim;

/**
 * An error reply inside the model, its message as Redis writes it after the {@code -}
 * ({@code "ERR value is not an integer or out of range"}). Thrown for a reply that is the
 * error itself; kept as a value when a script puts one inside an array.
 */
public final class SimError extends RuntimeException {
  public SimError(String message) {
    // No stack trace: this is an answer, not a fault in the model.
    super(message, null, false, false);
  }

  /** The error's first word, e.g. {@code ERR} or {@code NOSCRIPT}. */
  public String kind() {
    String message = getMessage();
    int space = message.indexOf(' ');
    return space < 0 ? message : message.substring(0, space);
  }
}
