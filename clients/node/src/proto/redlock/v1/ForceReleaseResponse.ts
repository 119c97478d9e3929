// Original file: proto/redlock/v1/lock.proto


/**
 * ForceReleaseResponse says whether there was anything to delete.
 */
export interface ForceReleaseResponse {
  /**
   * released is true when at least one node that answered held a lock on the resource (held
   * by a quorum or a leftover of a failed round) and deleted it; false when none did.
   */
  'released'?: (boolean);
}

/**
 * ForceReleaseResponse says whether there was anything to delete.
 */
export interface ForceReleaseResponse__Output {
  /**
   * released is true when at least one node that answered held a lock on the resource (held
   * by a quorum or a leftover of a failed round) and deleted it; false when none did.
   */
  'released': (boolean);
}
