// The public API, exactly what docs/clients.md lists as Node's exports (test/exports.test.mjs
// holds the two together). Tests and runners reach internals through ./internal, by path.
export { LockClient } from './client';
export type { AcquireOptions, ConnectOptions, LockClientOptions } from './client';
export { Lease } from './lease';
export type { LostCallback } from './lease';
export { Leadership, Observation } from './election';
export type { CampaignOptions, Leader } from './election';
export type { LeadOptions, LeadWork } from './lead';
export { LockServiceError, LockNotAcquiredError, LeaseLostError } from './errors';
export type { RetryOptions } from './retry';
