// Original file: proto/redlock/v1/lock.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { PermitHolder as _redlock_v1_PermitHolder, PermitHolder__Output as _redlock_v1_PermitHolder__Output } from '../../redlock/v1/PermitHolder';
import type { Long } from '@grpc/proto-loader';

/**
 * DescribeResponse is a snapshot of a resource's lock. When it is not held, only `held` is
 * set (false) and every other field is empty.
 */
export interface DescribeResponse {
  /**
   * held is true when a quorum of voting nodes hold the same lease.
   */
  'held'?: (boolean);
  /**
   * owner is the AcquireRequest.owner text of the Acquire that granted or last refreshed the
   * lease; empty when it gave none.
   */
  'owner'?: (string);
  /**
   * remaining_ttl is how long a quorum of nodes still hold the lock unless it is extended or
   * released: the quorum-th largest remaining time to live among the voting nodes that hold
   * it, as read. Not a validity: no clock drift is subtracted.
   */
  'remainingTtl'?: (_google_protobuf_Duration | null);
  /**
   * fencing_token is the lease's fencing token, as an Extend would report it: the one a quorum
   * of the voting nodes that hold it agree on (what Acquire returned), or, when no quorum agrees
   * (after a fault), the highest among them (see Lease.fencing_token).
   */
  'fencingToken'?: (number | string | Long);
  /**
   * nodes lists the Redis nodes (host:port) that answered and hold the lease, voting or not,
   * in the server's --redis order.
   */
  'nodes'?: (string)[];
  /**
   * holder_identity is the identity of the caller whose Acquire granted the lease (or last
   * refreshed it), as the access policy named it: a client certificate's URI SAN or CN, or the
   * identity of a bearer token. Empty when the server that granted it ran without a policy.
   */
  'holderIdentity'?: (string);
  /**
   * permits is the semaphore's N when a permit of the semaphore on this name is held; 0
   * otherwise. A lock and a semaphore on one name are separate: the fields above describe the
   * lock (empty when it is not held), these the semaphore, and both may be filled at once.
   */
  'permits'?: (number);
  /**
   * free_permits is permits minus the permits held by a quorum, as read.
   */
  'freePermits'?: (number);
  /**
   * holders lists the held permits, in permit order.
   */
  'holders'?: (_redlock_v1_PermitHolder)[];
}

/**
 * DescribeResponse is a snapshot of a resource's lock. When it is not held, only `held` is
 * set (false) and every other field is empty.
 */
export interface DescribeResponse__Output {
  /**
   * held is true when a quorum of voting nodes hold the same lease.
   */
  'held': (boolean);
  /**
   * owner is the AcquireRequest.owner text of the Acquire that granted or last refreshed the
   * lease; empty when it gave none.
   */
  'owner': (string);
  /**
   * remaining_ttl is how long a quorum of nodes still hold the lock unless it is extended or
   * released: the quorum-th largest remaining time to live among the voting nodes that hold
   * it, as read. Not a validity: no clock drift is subtracted.
   */
  'remainingTtl': (_google_protobuf_Duration__Output | null);
  /**
   * fencing_token is the lease's fencing token, as an Extend would report it: the one a quorum
   * of the voting nodes that hold it agree on (what Acquire returned), or, when no quorum agrees
   * (after a fault), the highest among them (see Lease.fencing_token).
   */
  'fencingToken': (string);
  /**
   * nodes lists the Redis nodes (host:port) that answered and hold the lease, voting or not,
   * in the server's --redis order.
   */
  'nodes': (string)[];
  /**
   * holder_identity is the identity of the caller whose Acquire granted the lease (or last
   * refreshed it), as the access policy named it: a client certificate's URI SAN or CN, or the
   * identity of a bearer token. Empty when the server that granted it ran without a policy.
   */
  'holderIdentity': (string);
  /**
   * permits is the semaphore's N when a permit of the semaphore on this name is held; 0
   * otherwise. A lock and a semaphore on one name are separate: the fields above describe the
   * lock (empty when it is not held), these the semaphore, and both may be filled at once.
   */
  'permits': (number);
  /**
   * free_permits is permits minus the permits held by a quorum, as read.
   */
  'freePermits': (number);
  /**
   * holders lists the held permits, in permit order.
   */
  'holders': (_redlock_v1_PermitHolder__Output)[];
}
