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
  /**
   * token is optional: the candidate's own token, with the rules of AcquireRequest.token
   * (22 to 64 characters of the base64url alphabet, at least 128 bits from a CSPRNG; anything
   * else is INVALID_ARGUMENT); empty: the server makes one. It becomes the token of the
   * leadership's lease, so a Campaign retried with the same token (its answer lost, its replica
   * gone) is the same candidacy: a leader gets its leadership back with the same term instead
   * of queueing behind itself. Only the first request's token counts; later ones must carry the
   * same token or none.
   */
  'token'?: (string);
  /**
   * resume is true when the candidate led with `token` on a stream that ended (a replica shut
   * down or the connection broke) and wants that leadership back through this stream: the
   * server renews the leadership's lease with the token (on any replica), answers with the same
   * term, and proclaims `value`. It never queues: when the token no longer holds the leadership
   * (it ran out, was taken over or force-released), the stream ends NOT_FOUND. Requires a token.
   */
  'resume'?: (boolean);
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
  /**
   * token is optional: the candidate's own token, with the rules of AcquireRequest.token
   * (22 to 64 characters of the base64url alphabet, at least 128 bits from a CSPRNG; anything
   * else is INVALID_ARGUMENT); empty: the server makes one. It becomes the token of the
   * leadership's lease, so a Campaign retried with the same token (its answer lost, its replica
   * gone) is the same candidacy: a leader gets its leadership back with the same term instead
   * of queueing behind itself. Only the first request's token counts; later ones must carry the
   * same token or none.
   */
  'token': (string);
  /**
   * resume is true when the candidate led with `token` on a stream that ended (a replica shut
   * down or the connection broke) and wants that leadership back through this stream: the
   * server renews the leadership's lease with the token (on any replica), answers with the same
   * term, and proclaims `value`. It never queues: when the token no longer holds the leadership
   * (it ran out, was taken over or force-released), the stream ends NOT_FOUND. Requires a token.
   */
  'resume': (boolean);
}
