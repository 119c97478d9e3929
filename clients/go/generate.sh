#!/usr/bin/env bash
# Regenerates the committed Go stubs in redlockv1/ from the contract in proto/.
# Usage: generate.sh [OUTDIR]   (default: the redlockv1/ next to this script; check.sh passes a
# temp dir to compare against what is committed.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto_root="$(cd "$here/../../proto/src/main/proto" && pwd)"
out="${1:-$here/redlockv1}"
mkdir -p "$out"
# module= strips the import-path prefix, so redlockd.dev/go/redlockv1 lands in $out/redlockv1;
# generate into a scratch dir and move the four files where they belong. election.proto imports
# lock.proto; both land in the same Go package (redlockv1).
scratch="$(mktemp -d -t redlockd-go-gen.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
protoc -I "$proto_root" \
  --go_out="$scratch" --go_opt=module=redlockd.dev/go \
  --go-grpc_out="$scratch" --go-grpc_opt=module=redlockd.dev/go \
  "$proto_root/redlock/v1/lock.proto" "$proto_root/redlock/v1/election.proto"
cp "$scratch/redlockv1/lock.pb.go" "$scratch/redlockv1/lock_grpc.pb.go" \
  "$scratch/redlockv1/election.pb.go" "$scratch/redlockv1/election_grpc.pb.go" "$out/"
