// Original file: proto/redlock/v1/lock.proto

import type { Lease as _redlock_v1_Lease, Lease__Output as _redlock_v1_Lease__Output } from '../../redlock/v1/Lease';

/**
 * AcquireResponse carries the granted lease.
 */
export interface AcquireResponse {
  /**
   * lease is the lock now held by the caller.
   */
  'lease'?: (_redlock_v1_Lease | null);
}

/**
 * AcquireResponse carries the granted lease.
 */
export interface AcquireResponse__Output {
  /**
   * lease is the lock now held by the caller.
   */
  'lease': (_redlock_v1_Lease__Output | null);
}
