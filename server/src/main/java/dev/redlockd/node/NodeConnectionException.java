package dev.redlockd.node;

/** The connection to a node failed or closed before the node answered. */
public final class NodeConnectionException extends RuntimeException {
  NodeConnectionException(String message, Throwable cause) {
    super(message, cause);
  }
}
