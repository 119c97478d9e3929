package dev.redlockd.client;

import io.grpc.Status;

/**
 * A lease can no longer be relied on: it expired, was taken over, or its renewals could not
 * reach a quorum before its validity ran out. Stop touching the protected resource.
 */
public class LeaseLostException extends LockServiceException {
  public LeaseLostException(Status status) {
    super(status, null);
  }
}
