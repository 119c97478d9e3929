// The contract, loaded at run time from the copies of lock.proto and election.proto that ship
// with this package. The load options must match those scripts/generate.mjs gives
// proto-loader-gen-types, which wrote the declarations under src/proto/.
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './proto/election';
import type { ElectionServiceClient } from './proto/redlock/v1/ElectionService';
import type { LockServiceClient } from './proto/redlock/v1/LockService';

/** Where the package's copy of the contract lives (dist/ and src/ are siblings of proto/). */
export const PROTO_DIR = path.join(__dirname, '..', 'proto');
/** LockService's contract. */
export const PROTO_FILE = 'redlock/v1/lock.proto';
/** ElectionService's contract (it imports lock.proto). */
export const ELECTION_PROTO_FILE = 'redlock/v1/election.proto';
/** Every file the client loads. */
export const PROTO_FILES: readonly string[] = [PROTO_FILE, ELECTION_PROTO_FILE];

export const LOAD_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String, // uint64 fencing tokens, terms and sequences arrive as decimal strings
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

let loaded: ProtoGrpcType | undefined;

/**
 * The loaded package `redlock.v1` (LockService, ElectionService and their messages) and
 * google.protobuf, with the generated types.
 */
export function loadProto(): ProtoGrpcType {
  if (loaded === undefined) {
    const definition = protoLoader.loadSync([...PROTO_FILES], LOAD_OPTIONS);
    loaded = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
  }
  return loaded;
}

export type { ElectionServiceClient, LockServiceClient };
