// Original file: proto/redlock/v1/election.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CampaignRequest as _redlock_v1_CampaignRequest, CampaignRequest__Output as _redlock_v1_CampaignRequest__Output } from '../../redlock/v1/CampaignRequest';
import type { CampaignResponse as _redlock_v1_CampaignResponse, CampaignResponse__Output as _redlock_v1_CampaignResponse__Output } from '../../redlock/v1/CampaignResponse';
import type { LeaderRequest as _redlock_v1_LeaderRequest, LeaderRequest__Output as _redlock_v1_LeaderRequest__Output } from '../../redlock/v1/LeaderRequest';
import type { LeaderResponse as _redlock_v1_LeaderResponse, LeaderResponse__Output as _redlock_v1_LeaderResponse__Output } from '../../redlock/v1/LeaderResponse';
import type { ObserveRequest as _redlock_v1_ObserveRequest, ObserveRequest__Output as _redlock_v1_ObserveRequest__Output } from '../../redlock/v1/ObserveRequest';
import type { ObserveResponse as _redlock_v1_ObserveResponse, ObserveResponse__Output as _redlock_v1_ObserveResponse__Output } from '../../redlock/v1/ObserveResponse';

/**
 * ElectionService elects one leader per election name and tells anyone who asks who it is.
 * 
 * Status codes are those of LockService (see lock.proto), with the election name where
 * LockService names the resource.
 */
export interface ElectionServiceClient extends grpc.Client {
  /**
   * Campaign makes the caller a candidate: the stream waits until the caller leads, then
   * answers with its term and keeps the leadership's lease alive as KeepAlive does (renewed
   * every ttl/3, an answer after each renewal, JEOPARDY when a renewal missed the quorum).
   * 
   * The first request names the election, the candidate's value and the ttl. A later request
   * may change the value (a leader proclaims it at once, keeping its term; a candidate leads
   * with it) or the ttl. Client half-close resigns at once (or withdraws the candidacy) and
   * ends the stream OK; the next candidate is woken on every replica. Client cancel or
   * disconnect stops the renewals and the leadership runs out at its validity. The stream ends
   * with NOT_FOUND when the leadership is lost. One candidacy per stream; candidates are served
   * in the order they arrived on each replica (see docs/guarantees.md for the order across
   * replicas). A leader sends a request at least once per ttl, as on KeepAlive: a leader silent
   * for longer than its ttl is taken for gone, renewals stop and the stream ends
   * DEADLINE_EXCEEDED.
   * 
   * A server shutting down ends its Campaign streams with UNAVAILABLE and resigns nothing: a
   * leader reopens the stream (through any replica) with its token and `resume`, and leads on
   * with the same term. See CampaignRequest.token. A replica whose renewals of the leadership
   * reach no quorum hands the stream on the same way, as KeepAlive does.
   */
  Campaign(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_redlock_v1_CampaignRequest, _redlock_v1_CampaignResponse__Output>;
  Campaign(options?: grpc.CallOptions): grpc.ClientDuplexStream<_redlock_v1_CampaignRequest, _redlock_v1_CampaignResponse__Output>;
  /**
   * Campaign makes the caller a candidate: the stream waits until the caller leads, then
   * answers with its term and keeps the leadership's lease alive as KeepAlive does (renewed
   * every ttl/3, an answer after each renewal, JEOPARDY when a renewal missed the quorum).
   * 
   * The first request names the election, the candidate's value and the ttl. A later request
   * may change the value (a leader proclaims it at once, keeping its term; a candidate leads
   * with it) or the ttl. Client half-close resigns at once (or withdraws the candidacy) and
   * ends the stream OK; the next candidate is woken on every replica. Client cancel or
   * disconnect stops the renewals and the leadership runs out at its validity. The stream ends
   * with NOT_FOUND when the leadership is lost. One candidacy per stream; candidates are served
   * in the order they arrived on each replica (see docs/guarantees.md for the order across
   * replicas). A leader sends a request at least once per ttl, as on KeepAlive: a leader silent
   * for longer than its ttl is taken for gone, renewals stop and the stream ends
   * DEADLINE_EXCEEDED.
   * 
   * A server shutting down ends its Campaign streams with UNAVAILABLE and resigns nothing: a
   * leader reopens the stream (through any replica) with its token and `resume`, and leads on
   * with the same term. See CampaignRequest.token. A replica whose renewals of the leadership
   * reach no quorum hands the stream on the same way, as KeepAlive does.
   */
  campaign(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_redlock_v1_CampaignRequest, _redlock_v1_CampaignResponse__Output>;
  campaign(options?: grpc.CallOptions): grpc.ClientDuplexStream<_redlock_v1_CampaignRequest, _redlock_v1_CampaignResponse__Output>;
  
  /**
   * Leader reports the current leader, or none. A snapshot read like LockService.Describe:
   * UNAVAILABLE when too few nodes answered to tell.
   */
  Leader(argument: _redlock_v1_LeaderRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_LeaderResponse__Output>): grpc.ClientUnaryCall;
  Leader(argument: _redlock_v1_LeaderRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_LeaderResponse__Output>): grpc.ClientUnaryCall;
  Leader(argument: _redlock_v1_LeaderRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_LeaderResponse__Output>): grpc.ClientUnaryCall;
  Leader(argument: _redlock_v1_LeaderRequest, callback: grpc.requestCallback<_redlock_v1_LeaderResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Leader reports the current leader, or none. A snapshot read like LockService.Describe:
   * UNAVAILABLE when too few nodes answered to tell.
   */
  leader(argument: _redlock_v1_LeaderRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_LeaderResponse__Output>): grpc.ClientUnaryCall;
  leader(argument: _redlock_v1_LeaderRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_redlock_v1_LeaderResponse__Output>): grpc.ClientUnaryCall;
  leader(argument: _redlock_v1_LeaderRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_redlock_v1_LeaderResponse__Output>): grpc.ClientUnaryCall;
  leader(argument: _redlock_v1_LeaderRequest, callback: grpc.requestCallback<_redlock_v1_LeaderResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Observe streams the current leader (or none) at once, then every change after it: a new
   * term, a new value, or no leader. Changes come in term order; a replica that cannot reach
   * a quorum of nodes reports no leader, since no leadership can be confirmed then. A client
   * that reads slower than the changes come gets the latest state when it reads again, not
   * every one in between. The stream lasts until the client cancels it or the server shuts
   * down (UNAVAILABLE).
   */
  Observe(argument: _redlock_v1_ObserveRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_redlock_v1_ObserveResponse__Output>;
  Observe(argument: _redlock_v1_ObserveRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_redlock_v1_ObserveResponse__Output>;
  /**
   * Observe streams the current leader (or none) at once, then every change after it: a new
   * term, a new value, or no leader. Changes come in term order; a replica that cannot reach
   * a quorum of nodes reports no leader, since no leadership can be confirmed then. A client
   * that reads slower than the changes come gets the latest state when it reads again, not
   * every one in between. The stream lasts until the client cancels it or the server shuts
   * down (UNAVAILABLE).
   */
  observe(argument: _redlock_v1_ObserveRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_redlock_v1_ObserveResponse__Output>;
  observe(argument: _redlock_v1_ObserveRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_redlock_v1_ObserveResponse__Output>;
  
}

/**
 * ElectionService elects one leader per election name and tells anyone who asks who it is.
 * 
 * Status codes are those of LockService (see lock.proto), with the election name where
 * LockService names the resource.
 */
export interface ElectionServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Campaign makes the caller a candidate: the stream waits until the caller leads, then
   * answers with its term and keeps the leadership's lease alive as KeepAlive does (renewed
   * every ttl/3, an answer after each renewal, JEOPARDY when a renewal missed the quorum).
   * 
   * The first request names the election, the candidate's value and the ttl. A later request
   * may change the value (a leader proclaims it at once, keeping its term; a candidate leads
   * with it) or the ttl. Client half-close resigns at once (or withdraws the candidacy) and
   * ends the stream OK; the next candidate is woken on every replica. Client cancel or
   * disconnect stops the renewals and the leadership runs out at its validity. The stream ends
   * with NOT_FOUND when the leadership is lost. One candidacy per stream; candidates are served
   * in the order they arrived on each replica (see docs/guarantees.md for the order across
   * replicas). A leader sends a request at least once per ttl, as on KeepAlive: a leader silent
   * for longer than its ttl is taken for gone, renewals stop and the stream ends
   * DEADLINE_EXCEEDED.
   * 
   * A server shutting down ends its Campaign streams with UNAVAILABLE and resigns nothing: a
   * leader reopens the stream (through any replica) with its token and `resume`, and leads on
   * with the same term. See CampaignRequest.token. A replica whose renewals of the leadership
   * reach no quorum hands the stream on the same way, as KeepAlive does.
   */
  Campaign: grpc.handleBidiStreamingCall<_redlock_v1_CampaignRequest__Output, _redlock_v1_CampaignResponse>;
  
  /**
   * Leader reports the current leader, or none. A snapshot read like LockService.Describe:
   * UNAVAILABLE when too few nodes answered to tell.
   */
  Leader: grpc.handleUnaryCall<_redlock_v1_LeaderRequest__Output, _redlock_v1_LeaderResponse>;
  
  /**
   * Observe streams the current leader (or none) at once, then every change after it: a new
   * term, a new value, or no leader. Changes come in term order; a replica that cannot reach
   * a quorum of nodes reports no leader, since no leadership can be confirmed then. A client
   * that reads slower than the changes come gets the latest state when it reads again, not
   * every one in between. The stream lasts until the client cancels it or the server shuts
   * down (UNAVAILABLE).
   */
  Observe: grpc.handleServerStreamingCall<_redlock_v1_ObserveRequest__Output, _redlock_v1_ObserveResponse>;
  
}

export interface ElectionServiceDefinition extends grpc.ServiceDefinition {
  Campaign: MethodDefinition<_redlock_v1_CampaignRequest, _redlock_v1_CampaignResponse, _redlock_v1_CampaignRequest__Output, _redlock_v1_CampaignResponse__Output>
  Leader: MethodDefinition<_redlock_v1_LeaderRequest, _redlock_v1_LeaderResponse, _redlock_v1_LeaderRequest__Output, _redlock_v1_LeaderResponse__Output>
  Observe: MethodDefinition<_redlock_v1_ObserveRequest, _redlock_v1_ObserveResponse, _redlock_v1_ObserveRequest__Output, _redlock_v1_ObserveResponse__Output>
}
