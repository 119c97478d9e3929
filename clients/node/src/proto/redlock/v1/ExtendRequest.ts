// Original file: proto/redlock/v1/lock.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

/**
 * ExtendRequest renews a held lease.
 */
export interface ExtendRequest {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource'?: (string);
  /**
   * token is the lease's token (same rules as in AcquireRequest, but required).
   */
  'token'?: (string);
  /**
   * ttl is the lease's new time to live, counted from now (same bounds as in AcquireRequest).
   */
  'ttl'?: (_google_protobuf_Duration | null);
  /**
   * permit is the lease's Lease.permit: 0 for a lock.
   */
  'permit'?: (number);
}

/**
 * ExtendRequest renews a held lease.
 */
export interface ExtendRequest__Output {
  /**
   * resource is the name of the lock (same rules as in AcquireRequest).
   */
  'resource': (string);
  /**
   * token is the lease's token (same rules as in AcquireRequest, but required).
   */
  'token': (string);
  /**
   * ttl is the lease's new time to live, counted from now (same bounds as in AcquireRequest).
   */
  'ttl': (_google_protobuf_Duration__Output | null);
  /**
   * permit is the lease's Lease.permit: 0 for a lock.
   */
  'permit': (number);
}
