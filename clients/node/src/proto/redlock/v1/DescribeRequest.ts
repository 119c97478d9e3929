// Original file: proto/redlock/v1/lock.proto


/**
 * DescribeRequest names the resource to describe.
 */
export interface DescribeRequest {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource'?: (string);
}

/**
 * DescribeRequest names the resource to describe.
 */
export interface DescribeRequest__Output {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource': (string);
}
