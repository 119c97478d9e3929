// Original file: proto/redlock/v1/lock.proto


/**
 * ReleaseResponse says whether the lease was still held.
 */
export interface ReleaseResponse {
  /**
   * released is true when a quorum of nodes still held the lease and deleted it; false when
   * it was no longer held (expired, taken over, unknown token). False is not an error. When
   * nodes that did not answer could make the difference, the call fails with UNAVAILABLE.
   */
  'released'?: (boolean);
}

/**
 * ReleaseResponse says whether the lease was still held.
 */
export interface ReleaseResponse__Output {
  /**
   * released is true when a quorum of nodes still held the lease and deleted it; false when
   * it was no longer held (expired, taken over, unknown token). False is not an error. When
   * nodes that did not answer could make the difference, the call fails with UNAVAILABLE.
   */
  'released': (boolean);
}
