// The contract, loaded at run time from the copy of lock.proto that ships with this package.
// The load options must match those scripts/generate.mjs gives proto-loader-gen-types, which
// wrote the declarations under src/proto/.
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './proto/lock';
import type { LockServiceClient } from './proto/redlock/v1/LockService';

/** Where the package's copy of the contract lives (dist/ and src/ are siblings of proto/). */
export const PROTO_DIR = path.join(__dirname, '..', 'proto');
export const PROTO_FILE = 'redlock/v1/lock.proto';

export const LOAD_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String, // uint64 fencing tokens and sequences arrive as decimal strings
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

let loaded: ProtoGrpcType | undefined;

/** The loaded package `redlock.v1` (and google.protobuf), with the generated types. */
export function loadProto(): ProtoGrpcType {
  if (loaded === undefined) {
    const definition = protoLoader.loadSync(PROTO_FILE, LOAD_OPTIONS);
    loaded = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
  }
  return loaded;
}

export type { LockServiceClient };
