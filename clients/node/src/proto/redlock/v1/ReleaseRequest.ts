// Original file: proto/redlock/v1/lock.proto


/**
 * ReleaseRequest gives up a lease.
 */
export interface ReleaseRequest {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource'?: (string);
  /**
   * token is the lease's token (same rules as in AcquireRequest, but required).
   */
  'token'?: (string);
  /**
   * permit is the lease's Lease.permit: 0 for a lock.
   */
  'permit'?: (number);
}

/**
 * ReleaseRequest gives up a lease.
 */
export interface ReleaseRequest__Output {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource': (string);
  /**
   * token is the lease's token (same rules as in AcquireRequest, but required).
   */
  'token': (string);
  /**
   * permit is the lease's Lease.permit: 0 for a lock.
   */
  'permit': (number);
}
