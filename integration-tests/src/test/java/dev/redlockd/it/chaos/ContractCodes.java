package dev.redlockd.it.chaos;

import io.grpc.Status;
import java.util.EnumSet;
import java.util.Set;

/** The status codes the contract (lock.proto, and the status table of docs/api.md) names for each call under faults. */
final class ContractCodes {
  /**
   * Acquire: granted, held by someone else, no quorum, the caller's deadline, a server limit.
   * CANCELLED is the client's own doing: a replica's channel is shut down when it is replaced.
   */
  static final Set<Status.Code> ACQUIRE = EnumSet.of(Status.Code.OK, Status.Code.ABORTED, Status.Code.UNAVAILABLE,
      Status.Code.DEADLINE_EXCEEDED, Status.Code.RESOURCE_EXHAUSTED, Status.Code.CANCELLED);

  /** Extend, Release and a KeepAlive stream's end: as Acquire, with NOT_FOUND for a lease no longer held. */
  static final Set<Status.Code> LEASE = EnumSet.of(Status.Code.OK, Status.Code.NOT_FOUND, Status.Code.UNAVAILABLE,
      Status.Code.DEADLINE_EXCEEDED, Status.Code.RESOURCE_EXHAUSTED, Status.Code.CANCELLED);

  private ContractCodes() {}
}
