package dev.redlockd.client;

import io.grpc.Status;

/** The lock is held by someone else and was not acquired within the wait (ABORTED). */
public class LockNotAcquiredException extends LockServiceException {
  public LockNotAcquiredException(Status status, Throwable cause) {
    super(status, cause);
  }
}
