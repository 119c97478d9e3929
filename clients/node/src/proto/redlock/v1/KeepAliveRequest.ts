// Original file: proto/redlock/v1/lock.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { Long } from '@grpc/proto-loader';

/**
 * KeepAliveRequest names (first request) or renews (later requests) the stream's lease.
 */
export interface KeepAliveRequest {
  /**
   * resource is the name of the lock; later requests must name the same one.
   */
  'resource'?: (string);
  /**
   * token is the lease's token; later requests must carry the same one.
   */
  'token'?: (string);
  /**
   * ttl is the lease's time to live; renewals happen every ttl/3. Same bounds as in
   * AcquireRequest. A later request may change it.
   */
  'ttl'?: (_google_protobuf_Duration | null);
  /**
   * sequence is optional: a number the client raises with each request it sends. The server
   * echoes it in KeepAliveResponse.sequence, which lets the client count a renewal's validity
   * from when it sent that request rather than from when the answer arrived.
   */
  'sequence'?: (number | string | Long);
  /**
   * permit is the lease's Lease.permit: 0 for a lock; later requests must carry the same one.
   */
  'permit'?: (number);
}

/**
 * KeepAliveRequest names (first request) or renews (later requests) the stream's lease.
 */
export interface KeepAliveRequest__Output {
  /**
   * resource is the name of the lock; later requests must name the same one.
   */
  'resource': (string);
  /**
   * token is the lease's token; later requests must carry the same one.
   */
  'token': (string);
  /**
   * ttl is the lease's time to live; renewals happen every ttl/3. Same bounds as in
   * AcquireRequest. A later request may change it.
   */
  'ttl': (_google_protobuf_Duration__Output | null);
  /**
   * sequence is optional: a number the client raises with each request it sends. The server
   * echoes it in KeepAliveResponse.sequence, which lets the client count a renewal's validity
   * from when it sent that request rather than from when the answer arrived.
   */
  'sequence': (string);
  /**
   * permit is the lease's Lease.permit: 0 for a lock; later requests must carry the same one.
   */
  'permit': (number);
}
