// Original file: proto/redlock/v1/election.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { Long } from '@grpc/proto-loader';

/**
 * CampaignRequest names the election (first request) or changes the candidacy (later ones).
 */
export interface CampaignRequest {
  /**
   * election is the name of the election: 1 to 512 UTF-8 bytes, otherwise INVALID_ARGUMENT.
   * Later requests must name the same one.
   */
  'election'?: (string);
  /**
   * value is what Leader and Observe report while this candidate leads (an address, say): at
   * most 256 UTF-8 bytes, otherwise INVALID_ARGUMENT. May be empty.
   */
  'value'?: (string);
  /**
   * ttl is the leadership's time to live; renewals happen every ttl/3. Same bounds as
   * AcquireRequest.ttl. A later request may change it.
   */
  'ttl'?: (_google_protobuf_Duration | null);
  /**
   * sequence is optional, as KeepAliveRequest.sequence: echoed in CampaignResponse.sequence.
   */
  'sequence'?: (number | string | Long);
}

/**
 * CampaignRequest names the election (first request) or changes the candidacy (later ones).
 */
export interface CampaignRequest__Output {
  /**
   * election is the name of the election: 1 to 512 UTF-8 bytes, otherwise INVALID_ARGUMENT.
   * Later requests must name the same one.
   */
  'election': (string);
  /**
   * value is what Leader and Observe report while this candidate leads (an address, say): at
   * most 256 UTF-8 bytes, otherwise INVALID_ARGUMENT. May be empty.
   */
  'value': (string);
  /**
   * ttl is the leadership's time to live; renewals happen every ttl/3. Same bounds as
   * AcquireRequest.ttl. A later request may change it.
   */
  'ttl': (_google_protobuf_Duration__Output | null);
  /**
   * sequence is optional, as KeepAliveRequest.sequence: echoed in CampaignResponse.sequence.
   */
  'sequence': (string);
}
