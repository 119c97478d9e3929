// Original file: proto/redlock/v1/lock.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { Long } from '@grpc/proto-loader';

/**
 * PermitHolder describes one held permit of a semaphore, as DescribeResponse does a lock.
 */
export interface PermitHolder {
  /**
   * permit is which of the N permits (1..N).
   */
  'permit'?: (number);
  /**
   * owner is the holder's AcquireRequest.owner text, as in DescribeResponse.
   */
  'owner'?: (string);
  /**
   * remaining_ttl is how long a quorum still holds this permit, as in DescribeResponse.
   */
  'remainingTtl'?: (_google_protobuf_Duration | null);
  /**
   * fencing_token is this permit's fencing token, as in DescribeResponse.
   */
  'fencingToken'?: (number | string | Long);
  /**
   * nodes lists the nodes that answered and hold this permit, as in DescribeResponse.
   */
  'nodes'?: (string)[];
  /**
   * holder_identity is the identity of the caller that was granted it, as in DescribeResponse.
   */
  'holderIdentity'?: (string);
}

/**
 * PermitHolder describes one held permit of a semaphore, as DescribeResponse does a lock.
 */
export interface PermitHolder__Output {
  /**
   * permit is which of the N permits (1..N).
   */
  'permit': (number);
  /**
   * owner is the holder's AcquireRequest.owner text, as in DescribeResponse.
   */
  'owner': (string);
  /**
   * remaining_ttl is how long a quorum still holds this permit, as in DescribeResponse.
   */
  'remainingTtl': (_google_protobuf_Duration__Output | null);
  /**
   * fencing_token is this permit's fencing token, as in DescribeResponse.
   */
  'fencingToken': (string);
  /**
   * nodes lists the nodes that answered and hold this permit, as in DescribeResponse.
   */
  'nodes': (string)[];
  /**
   * holder_identity is the identity of the caller that was granted it, as in DescribeResponse.
   */
  'holderIdentity': (string);
}
