// Original file: proto/redlock/v1/election.proto


/**
 * ObserveRequest names the election to watch.
 */
export interface ObserveRequest {
  /**
   * election is the name of the election (same rules as in CampaignRequest).
   */
  'election'?: (string);
}

/**
 * ObserveRequest names the election to watch.
 */
export interface ObserveRequest__Output {
  /**
   * election is the name of the election (same rules as in CampaignRequest).
   */
  'election': (string);
}
