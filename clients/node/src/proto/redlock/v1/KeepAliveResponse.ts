// Original file: proto/redlock/v1/lock.proto

import type { Lease as _redlock_v1_Lease, Lease__Output as _redlock_v1_Lease__Output } from '../../redlock/v1/Lease';
import type { LeaseState as _redlock_v1_LeaseState, LeaseState__Output as _redlock_v1_LeaseState__Output } from '../../redlock/v1/LeaseState';
import type { Long } from '@grpc/proto-loader';

/**
 * KeepAliveResponse reports the lease after each renewal attempt.
 */
export interface KeepAliveResponse {
  /**
   * lease is the lease as last renewed.
   */
  'lease'?: (_redlock_v1_Lease | null);
  /**
   * state says whether the last renewal reached a quorum.
   */
  'state'?: (_redlock_v1_LeaseState);
  /**
   * sequence is the highest KeepAliveRequest.sequence the server had received when the
   * renewal reported here began (0 if the client sends none). The server counts validity from
   * when that renewal finished, which the client cannot see: an answer may spend any time on
   * its way. Counting from the send time of the request with this sequence is safe, because the
   * renewal began after that request arrived. A client that needs its deadline to stay fresh
   * sends a later request (any ttl/4, say) so that the next renewal echoes a recent sequence.
   */
  'sequence'?: (number | string | Long);
}

/**
 * KeepAliveResponse reports the lease after each renewal attempt.
 */
export interface KeepAliveResponse__Output {
  /**
   * lease is the lease as last renewed.
   */
  'lease': (_redlock_v1_Lease__Output | null);
  /**
   * state says whether the last renewal reached a quorum.
   */
  'state': (_redlock_v1_LeaseState__Output);
  /**
   * sequence is the highest KeepAliveRequest.sequence the server had received when the
   * renewal reported here began (0 if the client sends none). The server counts validity from
   * when that renewal finished, which the client cannot see: an answer may spend any time on
   * its way. Counting from the send time of the request with this sequence is safe, because the
   * renewal began after that request arrived. A client that needs its deadline to stay fresh
   * sends a later request (any ttl/4, say) so that the next renewal echoes a recent sequence.
   */
  'sequence': (string);
}
