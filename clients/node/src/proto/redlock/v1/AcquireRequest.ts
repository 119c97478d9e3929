// Original file: proto/redlock/v1/lock.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

/**
 * AcquireRequest asks for the lock on one resource.
 */
export interface AcquireRequest {
  /**
   * resource is the name of the lock: 1 to 512 UTF-8 bytes, otherwise INVALID_ARGUMENT.
   */
  'resource'?: (string);
  /**
   * ttl is how long the lock lives on the Redis nodes unless extended. Required; must lie
   * within the server's [--min-ttl, --max-ttl] (defaults 10ms .. 1h), otherwise
   * INVALID_ARGUMENT.
   */
  'ttl'?: (_google_protobuf_Duration | null);
  /**
   * wait is how long to keep trying while the lock is held by someone else. Absent or zero:
   * one attempt. Negative: INVALID_ARGUMENT.
   */
  'wait'?: (_google_protobuf_Duration | null);
  /**
   * owner is optional free text for operators (host, pid): at most 256 UTF-8 bytes. It is kept
   * with the lock and reported by Describe; an Acquire that refreshes the lease replaces it.
   */
  'owner'?: (string);
  /**
   * token is optional: the caller's own proof of ownership, 22 to 64 characters of the
   * base64url alphabet (A-Z a-z 0-9 - _) carrying at least 128 bits from a CSPRNG. Empty:
   * the server makes one. Anything else is INVALID_ARGUMENT.
   */
  'token'?: (string);
  /**
   * permits is 0 (the default) for a lock: at most one holder. N >= 1 asks for one of N
   * permits on the resource, a semaphore: at most N holders at once, each with a lease of its
   * own (Lease.permit says which). Semaphores and locks are separate: a semaphore on "jobs"
   * and a lock on "jobs" do not exclude each other. Every caller of one semaphore must give the
   * same N while any permit on it is held: another N is FAILED_PRECONDITION (the message gives
   * both). At most 1024, otherwise INVALID_ARGUMENT. See docs/guarantees.md for why the bound
   * holds across nodes.
   */
  'permits'?: (number);
}

/**
 * AcquireRequest asks for the lock on one resource.
 */
export interface AcquireRequest__Output {
  /**
   * resource is the name of the lock: 1 to 512 UTF-8 bytes, otherwise INVALID_ARGUMENT.
   */
  'resource': (string);
  /**
   * ttl is how long the lock lives on the Redis nodes unless extended. Required; must lie
   * within the server's [--min-ttl, --max-ttl] (defaults 10ms .. 1h), otherwise
   * INVALID_ARGUMENT.
   */
  'ttl': (_google_protobuf_Duration__Output | null);
  /**
   * wait is how long to keep trying while the lock is held by someone else. Absent or zero:
   * one attempt. Negative: INVALID_ARGUMENT.
   */
  'wait': (_google_protobuf_Duration__Output | null);
  /**
   * owner is optional free text for operators (host, pid): at most 256 UTF-8 bytes. It is kept
   * with the lock and reported by Describe; an Acquire that refreshes the lease replaces it.
   */
  'owner': (string);
  /**
   * token is optional: the caller's own proof of ownership, 22 to 64 characters of the
   * base64url alphabet (A-Z a-z 0-9 - _) carrying at least 128 bits from a CSPRNG. Empty:
   * the server makes one. Anything else is INVALID_ARGUMENT.
   */
  'token': (string);
  /**
   * permits is 0 (the default) for a lock: at most one holder. N >= 1 asks for one of N
   * permits on the resource, a semaphore: at most N holders at once, each with a lease of its
   * own (Lease.permit says which). Semaphores and locks are separate: a semaphore on "jobs"
   * and a lock on "jobs" do not exclude each other. Every caller of one semaphore must give the
   * same N while any permit on it is held: another N is FAILED_PRECONDITION (the message gives
   * both). At most 1024, otherwise INVALID_ARGUMENT. See docs/guarantees.md for why the bound
   * holds across nodes.
   */
  'permits': (number);
}
