// Original file: proto/redlock/v1/lock.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { Long } from '@grpc/proto-loader';

/**
 * Lease describes a held lock.
 */
export interface Lease {
  /**
   * resource is the name of the lock.
   */
  'resource'?: (string);
  /**
   * token is the proof of ownership: pass it to Extend, Release and KeepAlive. Keep it
   * secret: whoever has it can release the lock.
   */
  'token'?: (string);
  /**
   * validity is how long the holder may rely on the lock, counted from the moment the server
   * finished acquiring or renewing it: ttl - elapsed - drift, drift = ttl * drift-factor +
   * 2ms. A client's safe local deadline is (the time it sent the request) + validity.
   */
  'validity'?: (_google_protobuf_Duration | null);
  /**
   * fencing_token strictly increases per resource across successive grants. Pass it to the
   * resource the lock protects, which refuses any write carrying a lower one than it has
   * seen. A refreshed or extended lease keeps its fencing token while a quorum of the nodes
   * that hold it agree on it (a node that took the lock but answered too late, with a higher
   * one of its own, does not change it); after a fault that leaves no such quorum a renewal may
   * report a higher one, never a lower one, and every later grant's token is higher still.
   * Either may be used. For a permit (see AcquireRequest.permits) all of this holds per
   * permit: fencing tokens rise per (resource, permit), and a protected resource that takes
   * writes from several holders at once keeps the highest it has seen per permit.
   */
  'fencingToken'?: (number | string | Long);
  /**
   * permit is 0 for a lock. For a semaphore's permit, which one of the N it is (1..N): pass it
   * back in Extend, Release and KeepAlive with the token.
   */
  'permit'?: (number);
}

/**
 * Lease describes a held lock.
 */
export interface Lease__Output {
  /**
   * resource is the name of the lock.
   */
  'resource': (string);
  /**
   * token is the proof of ownership: pass it to Extend, Release and KeepAlive. Keep it
   * secret: whoever has it can release the lock.
   */
  'token': (string);
  /**
   * validity is how long the holder may rely on the lock, counted from the moment the server
   * finished acquiring or renewing it: ttl - elapsed - drift, drift = ttl * drift-factor +
   * 2ms. A client's safe local deadline is (the time it sent the request) + validity.
   */
  'validity': (_google_protobuf_Duration__Output | null);
  /**
   * fencing_token strictly increases per resource across successive grants. Pass it to the
   * resource the lock protects, which refuses any write carrying a lower one than it has
   * seen. A refreshed or extended lease keeps its fencing token while a quorum of the nodes
   * that hold it agree on it (a node that took the lock but answered too late, with a higher
   * one of its own, does not change it); after a fault that leaves no such quorum a renewal may
   * report a higher one, never a lower one, and every later grant's token is higher still.
   * Either may be used. For a permit (see AcquireRequest.permits) all of this holds per
   * permit: fencing tokens rise per (resource, permit), and a protected resource that takes
   * writes from several holders at once keeps the highest it has seen per permit.
   */
  'fencingToken': (string);
  /**
   * permit is 0 for a lock. For a semaphore's permit, which one of the N it is (1..N): pass it
   * back in Extend, Release and KeepAlive with the token.
   */
  'permit': (number);
}
