package dev.redlockd.client;

import io.grpc.Status;

/** A lock call failed; {@link #status()} says how. Messages never contain a token. */
public class LockServiceException extends RuntimeException {
  private final transient Status status;

  public LockServiceException(Status status) {
    this(status, null);
  }

  public LockServiceException(Status status, Throwable cause) {
    super(status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription()), cause);
    this.status = status;
  }

  public Status status() {
    return status;
  }

  static LockServiceException of(Status status, Throwable cause) {
    return switch (status.getCode()) {
      case ABORTED -> new LockNotAcquiredException(status, cause);
      default -> new LockServiceException(status, cause);
    };
  }
}
