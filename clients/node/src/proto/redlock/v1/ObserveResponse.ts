// Original file: proto/redlock/v1/election.proto

import type { Leadership as _redlock_v1_Leadership, Leadership__Output as _redlock_v1_Leadership__Output } from '../../redlock/v1/Leadership';

/**
 * ObserveResponse is one state of the election: the first is the state when the stream
 * began, each later one a change.
 */
export interface ObserveResponse {
  /**
   * leader is the leader from now on; absent when the election has none.
   */
  'leader'?: (_redlock_v1_Leadership | null);
}

/**
 * ObserveResponse is one state of the election: the first is the state when the stream
 * began, each later one a change.
 */
export interface ObserveResponse__Output {
  /**
   * leader is the leader from now on; absent when the election has none.
   */
  'leader': (_redlock_v1_Leadership__Output | null);
}
