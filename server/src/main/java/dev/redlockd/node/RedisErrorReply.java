package dev.redlockd.node;

/**
 * An error reply from Redis ({@code -NOSCRIPT ...}, {@code -WRONGPASS ...}): the node answered,
 * and said no. The message is Redis's own line, which never holds a password.
 */
public final class RedisErrorReply extends RuntimeException {
  RedisErrorReply(String message) {
    // No stack trace: it would point into the event loop, not at the call that failed.
    super(message, null, false, false);
  }

  /** The error's first word, e.g. {@code NOSCRIPT}. */
  String kind() {
    String message = getMessage();
    int space = message.indexOf(' ');
    return space < 0 ? message : message.substring(0, space);
  }
}
