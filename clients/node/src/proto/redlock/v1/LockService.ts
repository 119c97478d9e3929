// Original file: proto/redlock/v1/lock.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AcquireRequest as _redlock_v1_AcquireRequest, AcquireRequest__Output as _redlock_v1_AcquireRequest__Output } from '../../redlock/v1/AcquireRequest';
import type { AcquireResponse as _redlock_v1_AcquireResponse, AcquireResponse__Output as _redlock_v1_AcquireResponse__Output } from '../../redlock/v1/AcquireResponse';
import type { DescribeRequest as _redlock_v1_DescribeRequest, DescribeRequest__Output as _redlock_v1_DescribeRequest__Output } from '../../redlock/v1/DescribeRequest';
import type { DescribeResponse as _redlock_v1_DescribeResponse, DescribeResponse__Output as _redlock_v1_DescribeResponse__Output } from '../../redlock/v1/DescribeResponse';
import type { ExtendRequest as _redlock_v1_ExtendRequest, ExtendRequest__Output as _redlock_v1_ExtendRequest__Output } from '../../redlock/v1/ExtendRequest';
import type { ExtendResponse as _redlock_v1_ExtendResponse, ExtendResponse__Output as _redlock_v1_ExtendResponse__Output } from '../../redlock/v1/ExtendResponse';
import type { ForceReleaseRequest as _redlock_v1_ForceReleaseRequest, ForceReleaseRequest__Output as _redlock_v1_ForceReleaseRequest__Output } from '../../redlock/v1/ForceReleaseRequest';
import type { ForceReleaseResponse as _redlock_v1_ForceReleaseResponse, ForceReleaseResponse__Output as _redlock_v1_ForceReleaseResponse__Output } from '../../redlock/v1/ForceReleaseResponse';
import type { KeepAliveRequest as _redlock_v1_KeepAliveRequest, KeepAliveRequest__Output as _redlock_v1_KeepAliveRequest__Output } from '../../redlock/v1/KeepAliveRequest';
import type { KeepAliveResponse as _redlock_v1_KeepAliveResponse, KeepAliveResponse__Output as _redlock_v1_KeepAliveResponse__Output } from '../../redlock/v1/KeepAliveResponse';
import type { ReleaseRequest as _redlock_v1_ReleaseRequest, ReleaseRequest__Output as _redlock_v1_ReleaseRequest__Output } from '../../redlock/v1/ReleaseRequest';
import type { ReleaseResponse as _redlock_v1_ReleaseResponse, ReleaseResponse__Output as _redlock_v1_ReleaseResponse__Output } from '../../redlock/v1/ReleaseResponse';

/**
 * LockService grants, extends and releases leases on named resources.
 * 
 * Status codes shared by every RPC:
 * INVALID_ARGUMENT   malformed request (see each field); nothing was changed.
 * UNAVAILABLE        fewer than a quorum (N/2+1) of Redis nodes answered; the message says
 * how many of N did. Safe to retry the same call.
 * DEADLINE_EXCEEDED  the call's own deadline ran out first.
 * RESOURCE_EXHAUSTED a configured server limit (waiting Acquire calls, streams) is reached,
 * or under an access policy the caller's own limit (held leases,
 * KeepAlive streams, waiting Acquire calls).
 * PERMISSION_DENIED  under an access policy, the caller is not granted this RPC on this
 * resource (see also ForceRelease).
 * UNAUTHENTICATED    under an access policy, the call carries no accepted identity (client
 * certificate or bearer token).
 */
export interface LockServiceClient extends grpc.Client {
  /**
   * Acquire takes the lock on a resource and returns a lease.
   * 
   * Waits up to `wait` while the lock is held by someone else. Acquiring with the token of a
   * lease that is still held succeeds and refreshes its ttl with the same fencing token, so a
   * caller may retry an Acquire whose answer it lost. If the call is cancelled or its deadline
   * passes while a grant is under way, a lease with a server-made token is released; one with
   * the caller's token is left to the caller (it may be retrying with it): retry or Release it,
   * or it runs out at its ttl.
   * Returns ABORTED when the lock is held by someone else and was not acquired within `wait`.
   */
  Acquire(argument: _redlock_v1_AcquireRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _redlock_v1_AcquireRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _redlock_v1_AcquireRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  Acquire(argument: _redlock_v1_AcquireRequest, callback: grpc.requestCallback<_redlock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Acquire takes the lock on a resource and returns a lease.
   * 
   * Waits up to `wait` while the lock is held by someone else. Acquiring with the token of a
   * lease that is still held succeeds and refreshes its ttl with the same fencing token, so a
   * caller may retry an Acquire whose answer it lost. If the call is cancelled or its deadline
   * passes while a grant is under way, a lease with a server-made token is released; one with
   * the caller's token is left to the caller (it may be retrying with it): retry or Release it,
   * or it runs out at its ttl.
   * Returns ABORTED when the lock is held by someone else and was not acquired within `wait`.
   */
  acquire(argument: _redlock_v1_AcquireRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _redlock_v1_AcquireRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _redlock_v1_AcquireRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  acquire(argument: _redlock_v1_AcquireRequest, callback: grpc.requestCallback<_redlock_v1_AcquireResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Describe reports who holds a resource, for operators. It never returns the token.
   * 
   * A read-only snapshot, not a linearizable read: every node is read at once within the
   * server's --node-timeout, and the lock may change hands before the answer arrives. The
   * lock is held when a quorum of voting nodes hold the same lease; nodes that did not answer
   * are not listed. Returns UNAVAILABLE when too few nodes answered to tell (the message says
   * how many of N did).
   */
  Describe(argument: _redlock_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _redlock_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _redlock_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _redlock_v1_DescribeRequest, callback: grpc.requestCallback<_redlock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Describe reports who holds a resource, for operators. It never returns the token.
   * 
   * A read-only snapshot, not a linearizable read: every node is read at once within the
   * server's --node-timeout, and the lock may change hands before the answer arrives. The
   * lock is held when a quorum of voting nodes hold the same lease; nodes that did not answer
   * are not listed. Returns UNAVAILABLE when too few nodes answered to tell (the message says
   * how many of N did).
   */
  describe(argument: _redlock_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _redlock_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _redlock_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _redlock_v1_DescribeRequest, callback: grpc.requestCallback<_redlock_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Extend sets the ttl of a held lease anew, counted from now.
   * 
   * Returns NOT_FOUND when the lease is not held (expired, released, taken over).
   */
  Extend(argument: _redlock_v1_ExtendRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ExtendResponse__Output>): grpc.ClientUnaryCall;
  Extend(argument: _redlock_v1_ExtendRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_ExtendResponse__Output>): grpc.ClientUnaryCall;
  Extend(argument: _redlock_v1_ExtendRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ExtendResponse__Output>): grpc.ClientUnaryCall;
  Extend(argument: _redlock_v1_ExtendRequest, callback: grpc.requestCallback<_redlock_v1_ExtendResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Extend sets the ttl of a held lease anew, counted from now.
   * 
   * Returns NOT_FOUND when the lease is not held (expired, released, taken over).
   */
  extend(argument: _redlock_v1_ExtendRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ExtendResponse__Output>): grpc.ClientUnaryCall;
  extend(argument: _redlock_v1_ExtendRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_ExtendResponse__Output>): grpc.ClientUnaryCall;
  extend(argument: _redlock_v1_ExtendRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ExtendResponse__Output>): grpc.ClientUnaryCall;
  extend(argument: _redlock_v1_ExtendRequest, callback: grpc.requestCallback<_redlock_v1_ExtendResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * ForceRelease deletes the lock of a resource on every node, whoever holds it and whatever
   * its token: for a holder that is gone and whose lease is too long to wait out. The holder is
   * not told; its next Extend or KeepAlive renewal gets NOT_FOUND. Fencing counters are kept,
   * so the next grant's fencing token is still higher than the released lease's. The server
   * logs each call at WARN with the resource and the caller's address (and TLS subject).
   * 
   * Returns PERMISSION_DENIED unless the server runs with --allow-force-release (nothing is
   * read or changed then), and UNAVAILABLE when fewer than a quorum of nodes answered (the
   * lock may then still be held; retry).
   */
  ForceRelease(argument: _redlock_v1_ForceReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  ForceRelease(argument: _redlock_v1_ForceReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  ForceRelease(argument: _redlock_v1_ForceReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  ForceRelease(argument: _redlock_v1_ForceReleaseRequest, callback: grpc.requestCallback<_redlock_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  /**
   * ForceRelease deletes the lock of a resource on every node, whoever holds it and whatever
   * its token: for a holder that is gone and whose lease is too long to wait out. The holder is
   * not told; its next Extend or KeepAlive renewal gets NOT_FOUND. Fencing counters are kept,
   * so the next grant's fencing token is still higher than the released lease's. The server
   * logs each call at WARN with the resource and the caller's address (and TLS subject).
   * 
   * Returns PERMISSION_DENIED unless the server runs with --allow-force-release (nothing is
   * read or changed then), and UNAVAILABLE when fewer than a quorum of nodes answered (the
   * lock may then still be held; retry).
   */
  forceRelease(argument: _redlock_v1_ForceReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  forceRelease(argument: _redlock_v1_ForceReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  forceRelease(argument: _redlock_v1_ForceReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  forceRelease(argument: _redlock_v1_ForceReleaseRequest, callback: grpc.requestCallback<_redlock_v1_ForceReleaseResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * KeepAlive binds a lease to this stream: the server renews it every ttl/3 while the
   * stream lives and answers after each renewal (the first answer promptly). The client sends a
   * request at least once per ttl (the clients send one every ttl/4): a stream with no request
   * for longer than its ttl is taken for a client that is gone (frozen, or cut off with its
   * connection left open), since no renewal could move its deadline any more; renewals stop, the
   * stream ends DEADLINE_EXCEEDED and the lease runs out at its validity, nothing released.
   * 
   * The first request names the lease by its resource and token: any lease whose token still
   * holds it on a quorum, whichever replica granted it or kept it before. So a holder whose
   * stream ended (its replica shut down, the connection broke) opens a new stream, on any
   * replica, with the same token and keeps the same lease with the same fencing token; if the
   * token no longer holds it, the stream ends NOT_FOUND. A further request renews at once and
   * may change the ttl: a kept lease's ttl is best changed here, not with Extend, so that the
   * answers' validity follows the change. Client half-close releases the lease and ends the
   * stream OK. Client cancel or disconnect stops the renewals and the lease runs out at its
   * validity (the holder may still be alive behind a partition). A server shutting down ends
   * every KeepAlive stream with UNAVAILABLE and releases nothing, so that the holder resumes
   * elsewhere. So does a replica whose renewals reach no quorum (others may reach one): it
   * answers LEASE_STATE_JEOPARDY, and ends the stream UNAVAILABLE, releasing nothing, once less
   * than half the ttl of validity is left, or when the stream's first renewal and its retry (a
   * tenth of the ttl later) both miss the quorum; the holder resumes through another replica. The stream ends with NOT_FOUND when the
   * lease is lost. One lease per stream.
   */
  KeepAlive(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_redlock_v1_KeepAliveRequest, _redlock_v1_KeepAliveResponse__Output>;
  KeepAlive(options?: grpc.CallOptions): grpc.ClientDuplexStream<_redlock_v1_KeepAliveRequest, _redlock_v1_KeepAliveResponse__Output>;
  /**
   * KeepAlive binds a lease to this stream: the server renews it every ttl/3 while the
   * stream lives and answers after each renewal (the first answer promptly). The client sends a
   * request at least once per ttl (the clients send one every ttl/4): a stream with no request
   * for longer than its ttl is taken for a client that is gone (frozen, or cut off with its
   * connection left open), since no renewal could move its deadline any more; renewals stop, the
   * stream ends DEADLINE_EXCEEDED and the lease runs out at its validity, nothing released.
   * 
   * The first request names the lease by its resource and token: any lease whose token still
   * holds it on a quorum, whichever replica granted it or kept it before. So a holder whose
   * stream ended (its replica shut down, the connection broke) opens a new stream, on any
   * replica, with the same token and keeps the same lease with the same fencing token; if the
   * token no longer holds it, the stream ends NOT_FOUND. A further request renews at once and
   * may change the ttl: a kept lease's ttl is best changed here, not with Extend, so that the
   * answers' validity follows the change. Client half-close releases the lease and ends the
   * stream OK. Client cancel or disconnect stops the renewals and the lease runs out at its
   * validity (the holder may still be alive behind a partition). A server shutting down ends
   * every KeepAlive stream with UNAVAILABLE and releases nothing, so that the holder resumes
   * elsewhere. So does a replica whose renewals reach no quorum (others may reach one): it
   * answers LEASE_STATE_JEOPARDY, and ends the stream UNAVAILABLE, releasing nothing, once less
   * than half the ttl of validity is left, or when the stream's first renewal and its retry (a
   * tenth of the ttl later) both miss the quorum; the holder resumes through another replica. The stream ends with NOT_FOUND when the
   * lease is lost. One lease per stream.
   */
  keepAlive(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_redlock_v1_KeepAliveRequest, _redlock_v1_KeepAliveResponse__Output>;
  keepAlive(options?: grpc.CallOptions): grpc.ClientDuplexStream<_redlock_v1_KeepAliveRequest, _redlock_v1_KeepAliveResponse__Output>;
  
  /**
   * Release gives a lease up on every node. Releasing a lease that is no longer held is not
   * an error: the answer says `released = false`.
   */
  Release(argument: _redlock_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _redlock_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _redlock_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _redlock_v1_ReleaseRequest, callback: grpc.requestCallback<_redlock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Release gives a lease up on every node. Releasing a lease that is no longer held is not
   * an error: the answer says `released = false`.
   */
  release(argument: _redlock_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _redlock_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _redlock_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _redlock_v1_ReleaseRequest, callback: grpc.requestCallback<_redlock_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * LockService grants, extends and releases leases on named resources.
 * 
 * Status codes shared by every RPC:
 * INVALID_ARGUMENT   malformed request (see each field); nothing was changed.
 * UNAVAILABLE        fewer than a quorum (N/2+1) of Redis nodes answered; the message says
 * how many of N did. Safe to retry the same call.
 * DEADLINE_EXCEEDED  the call's own deadline ran out first.
 * RESOURCE_EXHAUSTED a configured server limit (waiting Acquire calls, streams) is reached,
 * or under an access policy the caller's own limit (held leases,
 * KeepAlive streams, waiting Acquire calls).
 * PERMISSION_DENIED  under an access policy, the caller is not granted this RPC on this
 * resource (see also ForceRelease).
 * UNAUTHENTICATED    under an access policy, the call carries no accepted identity (client
 * certificate or bearer token).
 */
export interface LockServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Acquire takes the lock on a resource and returns a lease.
   * 
   * Waits up to `wait` while the lock is held by someone else. Acquiring with the token of a
   * lease that is still held succeeds and refreshes its ttl with the same fencing token, so a
   * caller may retry an Acquire whose answer it lost. If the call is cancelled or its deadline
   * passes while a grant is under way, a lease with a server-made token is released; one with
   * the caller's token is left to the caller (it may be retrying with it): retry or Release it,
   * or it runs out at its ttl.
   * Returns ABORTED when the lock is held by someone else and was not acquired within `wait`.
   */
  Acquire: grpc.handleUnaryCall<_redlock_v1_AcquireRequest__Output, _redlock_v1_AcquireResponse>;
  
  /**
   * Describe reports who holds a resource, for operators. It never returns the token.
   * 
   * A read-only snapshot, not a linearizable read: every node is read at once within the
   * server's --node-timeout, and the lock may change hands before the answer arrives. The
   * lock is held when a quorum of voting nodes hold the same lease; nodes that did not answer
   * are not listed. Returns UNAVAILABLE when too few nodes answered to tell (the message says
   * how many of N did).
   */
  Describe: grpc.handleUnaryCall<_redlock_v1_DescribeRequest__Output, _redlock_v1_DescribeResponse>;
  
  /**
   * Extend sets the ttl of a held lease anew, counted from now.
   * 
   * Returns NOT_FOUND when the lease is not held (expired, released, taken over).
   */
  Extend: grpc.handleUnaryCall<_redlock_v1_ExtendRequest__Output, _redlock_v1_ExtendResponse>;
  
  /**
   * ForceRelease deletes the lock of a resource on every node, whoever holds it and whatever
   * its token: for a holder that is gone and whose lease is too long to wait out. The holder is
   * not told; its next Extend or KeepAlive renewal gets NOT_FOUND. Fencing counters are kept,
   * so the next grant's fencing token is still higher than the released lease's. The server
   * logs each call at WARN with the resource and the caller's address (and TLS subject).
   * 
   * Returns PERMISSION_DENIED unless the server runs with --allow-force-release (nothing is
   * read or changed then), and UNAVAILABLE when fewer than a quorum of nodes answered (the
   * lock may then still be held; retry).
   */
  ForceRelease: grpc.handleUnaryCall<_redlock_v1_ForceReleaseRequest__Output, _redlock_v1_ForceReleaseResponse>;
  
  /**
   * KeepAlive binds a lease to this stream: the server renews it every ttl/3 while the
   * stream lives and answers after each renewal (the first answer promptly). The client sends a
   * request at least once per ttl (the clients send one every ttl/4): a stream with no request
   * for longer than its ttl is taken for a client that is gone (frozen, or cut off with its
   * connection left open), since no renewal could move its deadline any more; renewals stop, the
   * stream ends DEADLINE_EXCEEDED and the lease runs out at its validity, nothing released.
   * 
   * The first request names the lease by its resource and token: any lease whose token still
   * holds it on a quorum, whichever replica granted it or kept it before. So a holder whose
   * stream ended (its replica shut down, the connection broke) opens a new stream, on any
   * replica, with the same token and keeps the same lease with the same fencing token; if the
   * token no longer holds it, the stream ends NOT_FOUND. A further request renews at once and
   * may change the ttl: a kept lease's ttl is best changed here, not with Extend, so that the
   * answers' validity follows the change. Client half-close releases the lease and ends the
   * stream OK. Client cancel or disconnect stops the renewals and the lease runs out at its
   * validity (the holder may still be alive behind a partition). A server shutting down ends
   * every KeepAlive stream with UNAVAILABLE and releases nothing, so that the holder resumes
   * elsewhere. So does a replica whose renewals reach no quorum (others may reach one): it
   * answers LEASE_STATE_JEOPARDY, and ends the stream UNAVAILABLE, releasing nothing, once less
   * than half the ttl of validity is left, or when the stream's first renewal and its retry (a
   * tenth of the ttl later) both miss the quorum; the holder resumes through another replica. The stream ends with NOT_FOUND when the
   * lease is lost. One lease per stream.
   */
  KeepAlive: grpc.handleBidiStreamingCall<_redlock_v1_KeepAliveRequest__Output, _redlock_v1_KeepAliveResponse>;
  
  /**
   * Release gives a lease up on every node. Releasing a lease that is no longer held is not
   * an error: the answer says `released = false`.
   */
  Release: grpc.handleUnaryCall<_redlock_v1_ReleaseRequest__Output, _redlock_v1_ReleaseResponse>;
  
}

export interface LockServiceDefinition extends grpc.ServiceDefinition {
  Acquire: MethodDefinition<_redlock_v1_AcquireRequest, _redlock_v1_AcquireResponse, _redlock_v1_AcquireRequest__Output, _redlock_v1_AcquireResponse__Output>
  Describe: MethodDefinition<_redlock_v1_DescribeRequest, _redlock_v1_DescribeResponse, _redlock_v1_DescribeRequest__Output, _redlock_v1_DescribeResponse__Output>
  Extend: MethodDefinition<_redlock_v1_ExtendRequest, _redlock_v1_ExtendResponse, _redlock_v1_ExtendRequest__Output, _redlock_v1_ExtendResponse__Output>
  ForceRelease: MethodDefinition<_redlock_v1_ForceReleaseRequest, _redlock_v1_ForceReleaseResponse, _redlock_v1_ForceReleaseRequest__Output, _redlock_v1_ForceReleaseResponse__Output>
  KeepAlive: MethodDefinition<_redlock_v1_KeepAliveRequest, _redlock_v1_KeepAliveResponse, _redlock_v1_KeepAliveRequest__Output, _redlock_v1_KeepAliveResponse__Output>
  Release: MethodDefinition<_redlock_v1_ReleaseRequest, _redlock_v1_ReleaseResponse, _redlock_v1_ReleaseRequest__Output, _redlock_v1_ReleaseResponse__Output>
}
