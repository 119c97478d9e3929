export { LockClient } from './client';
export type { AcquireOptions, ConnectOptions, LockClientOptions } from './client';
export { Lease, guardMs } from './lease';
export type { LostCallback } from './lease';
export { LockServiceError, LockNotAcquiredError, LeaseLostError, codeName } from './errors';
export { RetryPolicy } from './retry';
export type { RetryOptions } from './retry';
export { loadProto, PROTO_DIR, PROTO_FILE, ELECTION_PROTO_FILE, PROTO_FILES, LOAD_OPTIONS } from './service';
