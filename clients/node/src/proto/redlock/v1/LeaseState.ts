// Original file: proto/redlock/v1/lock.proto

/**
 * LeaseState is the health of a kept-alive lease.
 */
export const LeaseState = {
  /**
   * LEASE_STATE_UNSPECIFIED is never sent.
   */
  LEASE_STATE_UNSPECIFIED: 'LEASE_STATE_UNSPECIFIED',
  /**
   * LEASE_STATE_HELD: the last renewal reached a quorum.
   */
  LEASE_STATE_HELD: 'LEASE_STATE_HELD',
  /**
   * LEASE_STATE_JEOPARDY: the last renewal did not reach a quorum but the lease's validity
   * remains; the server retries faster, and ends the stream with UNAVAILABLE (releasing nothing)
   * once less than half the ttl is left, so that the holder resumes through another replica.
   */
  LEASE_STATE_JEOPARDY: 'LEASE_STATE_JEOPARDY',
} as const;

/**
 * LeaseState is the health of a kept-alive lease.
 */
export type LeaseState =
  /**
   * LEASE_STATE_UNSPECIFIED is never sent.
   */
  | 'LEASE_STATE_UNSPECIFIED'
  | 0
  /**
   * LEASE_STATE_HELD: the last renewal reached a quorum.
   */
  | 'LEASE_STATE_HELD'
  | 1
  /**
   * LEASE_STATE_JEOPARDY: the last renewal did not reach a quorum but the lease's validity
   * remains; the server retries faster, and ends the stream with UNAVAILABLE (releasing nothing)
   * once less than half the ttl is left, so that the holder resumes through another replica.
   */
  | 'LEASE_STATE_JEOPARDY'
  | 2

/**
 * LeaseState is the health of a kept-alive lease.
 */
export type LeaseState__Output = typeof LeaseState[keyof typeof LeaseState]
