// Original file: proto/redlock/v1/lock.proto

import type { Lease as _redlock_v1_Lease, Lease__Output as _redlock_v1_Lease__Output } from '../../redlock/v1/Lease';

/**
 * ExtendResponse carries the renewed lease.
 */
export interface ExtendResponse {
  /**
   * lease is the renewed lease, with a fresh validity and the same fencing token.
   */
  'lease'?: (_redlock_v1_Lease | null);
}

/**
 * ExtendResponse carries the renewed lease.
 */
export interface ExtendResponse__Output {
  /**
   * lease is the renewed lease, with a fresh validity and the same fencing token.
   */
  'lease': (_redlock_v1_Lease__Output | null);
}
