// Original file: proto/redlock/v1/election.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { LeaseState as _redlock_v1_LeaseState, LeaseState__Output as _redlock_v1_LeaseState__Output } from '../../redlock/v1/LeaseState';
import type { Long } from '@grpc/proto-loader';

/**
 * CampaignResponse reports the caller's leadership: first when it begins, then after each
 * renewal and each change of value.
 */
export interface CampaignResponse {
  /**
   * term is the leadership's fencing token: it strictly increases per election across
   * successive leaders. Pass it to whatever the leader writes to, as with Lease.fencing_token.
   */
  'term'?: (number | string | Long);
  /**
   * value is the value Leader and Observe report now.
   */
  'value'?: (string);
  /**
   * validity is how long the caller may rely on leading, counted as Lease.validity.
   */
  'validity'?: (_google_protobuf_Duration | null);
  /**
   * state says whether the last renewal reached a quorum (HELD) or not (JEOPARDY).
   */
  'state'?: (_redlock_v1_LeaseState);
  /**
   * sequence is as KeepAliveResponse.sequence.
   */
  'sequence'?: (number | string | Long);
}

/**
 * CampaignResponse reports the caller's leadership: first when it begins, then after each
 * renewal and each change of value.
 */
export interface CampaignResponse__Output {
  /**
   * term is the leadership's fencing token: it strictly increases per election across
   * successive leaders. Pass it to whatever the leader writes to, as with Lease.fencing_token.
   */
  'term': (string);
  /**
   * value is the value Leader and Observe report now.
   */
  'value': (string);
  /**
   * validity is how long the caller may rely on leading, counted as Lease.validity.
   */
  'validity': (_google_protobuf_Duration__Output | null);
  /**
   * state says whether the last renewal reached a quorum (HELD) or not (JEOPARDY).
   */
  'state': (_redlock_v1_LeaseState__Output);
  /**
   * sequence is as KeepAliveResponse.sequence.
   */
  'sequence': (string);
}
