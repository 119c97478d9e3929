// Original file: proto/redlock/v1/lock.proto


/**
 * ForceReleaseRequest names the resource whose lock is to be deleted.
 */
export interface ForceReleaseRequest {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource'?: (string);
  /**
   * permit is 0 for the lock; 1..1024 deletes that permit of the semaphore on the resource.
   */
  'permit'?: (number);
}

/**
 * ForceReleaseRequest names the resource whose lock is to be deleted.
 */
export interface ForceReleaseRequest__Output {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource': (string);
  /**
   * permit is 0 for the lock; 1..1024 deletes that permit of the semaphore on the resource.
   */
  'permit': (number);
}
