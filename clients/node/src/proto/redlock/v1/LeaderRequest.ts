// Original file: proto/redlock/v1/election.proto


/**
 * LeaderRequest names the election.
 */
export interface LeaderRequest {
  /**
   * election is the name of the election (same rules as in CampaignRequest).
   */
  'election'?: (string);
}

/**
 * LeaderRequest names the election.
 */
export interface LeaderRequest__Output {
  /**
   * election is the name of the election (same rules as in CampaignRequest).
   */
  'election': (string);
}
