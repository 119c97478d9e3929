package dev.redlockd.client;

import io.grpc.Status;
import java.nio.channels.ClosedChannelException;

/** The status of a failed call, as this client reports it. */
final class CallStatus {
  private CallStatus() {}

  /**
   * {@link Status#fromThrowable}, except that a connection found closed while a call was being
   * written is UNAVAILABLE. grpc-netty reports that case as UNKNOWN "channel closed" when the
   * closing carried no cause (a server killed mid-call, seen on Netty 4.2); the server said
   * nothing, the connection is simply gone, and like UNAVAILABLE the call may be retried.
   */
  static Status of(Throwable failure) {
    Status status = Status.fromThrowable(failure);
    if (status.getCode() == Status.Code.UNKNOWN && status.getCause() instanceof ClosedChannelException) {
      return Status.UNAVAILABLE.withDescription(status.getDescription()).withCause(status.getCause());
    }
    return status;
  }
}
