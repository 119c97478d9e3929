// Original file: proto/redlock/v1/lock.proto


/**
 * ForceReleaseRequest names the resource whose lock is to be deleted.
 */
export interface ForceReleaseRequest {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource'?: (string);
}

/**
 * ForceReleaseRequest names the resource whose lock is to be deleted.
 */
export interface ForceReleaseRequest__Output {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource': (string);
}
