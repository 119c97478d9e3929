package dev.redlockd.it.chaos;

import io.grpc.Status;

/**
 * One Acquire as its caller saw it. {@code sendNanos} is taken before the call and
 * {@code endNanos} after its answer arrived, so the interval contains the server's whole round
 * (for the Java client it also contains the client's own retries of that call).
 *
 * @param leaseId unique per grant, {@code -1} when nothing was granted
 */
record AcquireCall(String resource, ClientKind kind, int replica, long sendNanos, long endNanos, Status.Code code,
    long fence, long leaseId) {

  static AcquireCall granted(String resource, ClientKind kind, int replica, long sendNanos, long endNanos,
      long fence, long leaseId) {
    return new AcquireCall(resource, kind, replica, sendNanos, endNanos, Status.Code.OK, fence, leaseId);
  }

  static AcquireCall failed(String resource, ClientKind kind, int replica, long sendNanos, long endNanos,
      Status.Code code) {
    return new AcquireCall(resource, kind, replica, sendNanos, endNanos, code, 0, -1);
  }

  boolean granted() {
    return code == Status.Code.OK;
  }
}
