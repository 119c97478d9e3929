import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from './google/protobuf/Duration';
import type { AcquireRequest as _redlock_v1_AcquireRequest, AcquireRequest__Output as _redlock_v1_AcquireRequest__Output } from './redlock/v1/AcquireRequest';
import type { AcquireResponse as _redlock_v1_AcquireResponse, AcquireResponse__Output as _redlock_v1_AcquireResponse__Output } from './redlock/v1/AcquireResponse';
import type { CampaignRequest as _redlock_v1_CampaignRequest, CampaignRequest__Output as _redlock_v1_CampaignRequest__Output } from './redlock/v1/CampaignRequest';
import type { CampaignResponse as _redlock_v1_CampaignResponse, CampaignResponse__Output as _redlock_v1_CampaignResponse__Output } from './redlock/v1/CampaignResponse';
import type { DescribeRequest as _redlock_v1_DescribeRequest, DescribeRequest__Output as _redlock_v1_DescribeRequest__Output } from './redlock/v1/DescribeRequest';
import type { DescribeResponse as _redlock_v1_DescribeResponse, DescribeResponse__Output as _redlock_v1_DescribeResponse__Output } from './redlock/v1/DescribeResponse';
import type { ElectionServiceClient as _redlock_v1_ElectionServiceClient, ElectionServiceDefinition as _redlock_v1_ElectionServiceDefinition } from './redlock/v1/ElectionService';
import type { ExtendRequest as _redlock_v1_ExtendRequest, ExtendRequest__Output as _redlock_v1_ExtendRequest__Output } from './redlock/v1/ExtendRequest';
import type { ExtendResponse as _redlock_v1_ExtendResponse, ExtendResponse__Output as _redlock_v1_ExtendResponse__Output } from './redlock/v1/ExtendResponse';
import type { ForceReleaseRequest as _redlock_v1_ForceReleaseRequest, ForceReleaseRequest__Output as _redlock_v1_ForceReleaseRequest__Output } from './redlock/v1/ForceReleaseRequest';
import type { ForceReleaseResponse as _redlock_v1_ForceReleaseResponse, ForceReleaseResponse__Output as _redlock_v1_ForceReleaseResponse__Output } from './redlock/v1/ForceReleaseResponse';
import type { KeepAliveRequest as _redlock_v1_KeepAliveRequest, KeepAliveRequest__Output as _redlock_v1_KeepAliveRequest__Output } from './redlock/v1/KeepAliveRequest';
import type { KeepAliveResponse as _redlock_v1_KeepAliveResponse, KeepAliveResponse__Output as _redlock_v1_KeepAliveResponse__Output } from './redlock/v1/KeepAliveResponse';
import type { LeaderRequest as _redlock_v1_LeaderRequest, LeaderRequest__Output as _redlock_v1_LeaderRequest__Output } from './redlock/v1/LeaderRequest';
import type { LeaderResponse as _redlock_v1_LeaderResponse, LeaderResponse__Output as _redlock_v1_LeaderResponse__Output } from './redlock/v1/LeaderResponse';
import type { Leadership as _redlock_v1_Leadership, Leadership__Output as _redlock_v1_Leadership__Output } from './redlock/v1/Leadership';
import type { Lease as _redlock_v1_Lease, Lease__Output as _redlock_v1_Lease__Output } from './redlock/v1/Lease';
import type { LockServiceClient as _redlock_v1_LockServiceClient, LockServiceDefinition as _redlock_v1_LockServiceDefinition } from './redlock/v1/LockService';
import type { ObserveRequest as _redlock_v1_ObserveRequest, ObserveRequest__Output as _redlock_v1_ObserveRequest__Output } from './redlock/v1/ObserveRequest';
import type { ObserveResponse as _redlock_v1_ObserveResponse, ObserveResponse__Output as _redlock_v1_ObserveResponse__Output } from './redlock/v1/ObserveResponse';
import type { PermitHolder as _redlock_v1_PermitHolder, PermitHolder__Output as _redlock_v1_PermitHolder__Output } from './redlock/v1/PermitHolder';
import type { ReleaseRequest as _redlock_v1_ReleaseRequest, ReleaseRequest__Output as _redlock_v1_ReleaseRequest__Output } from './redlock/v1/ReleaseRequest';
import type { ReleaseResponse as _redlock_v1_ReleaseResponse, ReleaseResponse__Output as _redlock_v1_ReleaseResponse__Output } from './redlock/v1/ReleaseResponse';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  google: {
    protobuf: {
      Duration: MessageTypeDefinition<_google_protobuf_Duration, _google_protobuf_Duration__Output>
    }
  }
  redlock: {
    v1: {
      AcquireRequest: MessageTypeDefinition<_redlock_v1_AcquireRequest, _redlock_v1_AcquireRequest__Output>
      AcquireResponse: MessageTypeDefinition<_redlock_v1_AcquireResponse, _redlock_v1_AcquireResponse__Output>
      CampaignRequest: MessageTypeDefinition<_redlock_v1_CampaignRequest, _redlock_v1_CampaignRequest__Output>
      CampaignResponse: MessageTypeDefinition<_redlock_v1_CampaignResponse, _redlock_v1_CampaignResponse__Output>
      DescribeRequest: MessageTypeDefinition<_redlock_v1_DescribeRequest, _redlock_v1_DescribeRequest__Output>
      DescribeResponse: MessageTypeDefinition<_redlock_v1_DescribeResponse, _redlock_v1_DescribeResponse__Output>
      /**
       * ElectionService elects one leader per election name and tells anyone who asks who it is.
       * 
       * Status codes are those of LockService (see lock.proto), with the election name where
       * LockService names the resource.
       */
      ElectionService: SubtypeConstructor<typeof grpc.Client, _redlock_v1_ElectionServiceClient> & { service: _redlock_v1_ElectionServiceDefinition }
      ExtendRequest: MessageTypeDefinition<_redlock_v1_ExtendRequest, _redlock_v1_ExtendRequest__Output>
      ExtendResponse: MessageTypeDefinition<_redlock_v1_ExtendResponse, _redlock_v1_ExtendResponse__Output>
      ForceReleaseRequest: MessageTypeDefinition<_redlock_v1_ForceReleaseRequest, _redlock_v1_ForceReleaseRequest__Output>
      ForceReleaseResponse: MessageTypeDefinition<_redlock_v1_ForceReleaseResponse, _redlock_v1_ForceReleaseResponse__Output>
      KeepAliveRequest: MessageTypeDefinition<_redlock_v1_KeepAliveRequest, _redlock_v1_KeepAliveRequest__Output>
      KeepAliveResponse: MessageTypeDefinition<_redlock_v1_KeepAliveResponse, _redlock_v1_KeepAliveResponse__Output>
      LeaderRequest: MessageTypeDefinition<_redlock_v1_LeaderRequest, _redlock_v1_LeaderRequest__Output>
      LeaderResponse: MessageTypeDefinition<_redlock_v1_LeaderResponse, _redlock_v1_LeaderResponse__Output>
      Leadership: MessageTypeDefinition<_redlock_v1_Leadership, _redlock_v1_Leadership__Output>
      Lease: MessageTypeDefinition<_redlock_v1_Lease, _redlock_v1_Lease__Output>
      LeaseState: EnumTypeDefinition
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
      LockService: SubtypeConstructor<typeof grpc.Client, _redlock_v1_LockServiceClient> & { service: _redlock_v1_LockServiceDefinition }
      ObserveRequest: MessageTypeDefinition<_redlock_v1_ObserveRequest, _redlock_v1_ObserveRequest__Output>
      ObserveResponse: MessageTypeDefinition<_redlock_v1_ObserveResponse, _redlock_v1_ObserveResponse__Output>
      PermitHolder: MessageTypeDefinition<_redlock_v1_PermitHolder, _redlock_v1_PermitHolder__Output>
      ReleaseRequest: MessageTypeDefinition<_redlock_v1_ReleaseRequest, _redlock_v1_ReleaseRequest__Output>
      ReleaseResponse: MessageTypeDefinition<_redlock_v1_ReleaseResponse, _redlock_v1_ReleaseResponse__Output>
    }
  }
}

