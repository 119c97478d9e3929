// Not part of the package's API (package.json exports only "."): what the tests and tools need
// beyond it, imported by path (dist/internal.js). Tests reach other modules the same way.
export { loadProto, PROTO_DIR, PROTO_FILE, ELECTION_PROTO_FILE, PROTO_FILES, LOAD_OPTIONS } from './service';
