// Original file: proto/redlock/v1/election.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Leadership is who leads an election, as everyone may see it.
 */
export interface Leadership {
  /**
   * value is the leader's value (CampaignRequest.value).
   */
  'value'?: (string);
  /**
   * term is the leader's fencing token (CampaignResponse.term).
   */
  'term'?: (number | string | Long);
}

/**
 * Leadership is who leads an election, as everyone may see it.
 */
export interface Leadership__Output {
  /**
   * value is the leader's value (CampaignRequest.value).
   */
  'value': (string);
  /**
   * term is the leader's fencing token (CampaignResponse.term).
   */
  'term': (string);
}
