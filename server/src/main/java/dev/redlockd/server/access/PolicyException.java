package dev.redlockd.server.access;

/** A policy file that cannot be loaded; the message says where and why, in one line. */
public final class PolicyException extends Exception {
  public PolicyException(String message) {
    super(message);
  }

  public PolicyException(String message, Throwable cause) {
    super(message, cause);
  }
}
