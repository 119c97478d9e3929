// Original file: proto/redlock/v1/election.proto

import type { Leadership as _redlock_v1_Leadership, Leadership__Output as _redlock_v1_Leadership__Output } from '../../redlock/v1/Leadership';

/**
 * LeaderResponse holds the current leader, if any.
 */
export interface LeaderResponse {
  /**
   * leader is the current leader; absent when the election has none.
   */
  'leader'?: (_redlock_v1_Leadership | null);
}

/**
 * LeaderResponse holds the current leader, if any.
 */
export interface LeaderResponse__Output {
  /**
   * leader is the current leader; absent when the election has none.
   */
  'leader': (_redlock_v1_Leadership__Output | null);
}
