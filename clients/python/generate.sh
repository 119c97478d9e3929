#!/usr/bin/env bash
# Regenerates the committed Python stubs in src/redlockd/_proto/ from the contract in proto/.
# Usage: generate.sh [OUTDIR]   (default: src/redlockd/_proto next to this script; check.sh passes
# a temp dir and compares the result with what is committed.)
#
# The messages (lock_pb2.py, election_pb2.py and their .pyi files) come from Debian's protoc 3.21
# (protobuf-compiler), the service modules (lock_pb2_grpc.py, election_pb2_grpc.py) from Debian's
# grpc_tools (python3-grpc-tools). Why not grpc_tools for both: its bundled libprotoc is 3.5.1,
# whose *_pb2.py modules build descriptors by hand, which protobuf >= 4 refuses under its upb
# backend; and it cannot write .pyi files.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto_root="$(cd "$here/../../proto/src/main/proto" && pwd)"
out="${1:-$here/src/redlockd/_proto}"
python=/usr/bin/python3
well_known="$("$python" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
mkdir -p "$out"
scratch="$(mktemp -d -t redlockd-python-gen.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
protos=("$proto_root/redlock/v1/lock.proto" "$proto_root/redlock/v1/election.proto")
protoc -I "$proto_root" --python_out="$scratch" --pyi_out="$scratch" "${protos[@]}"
"$python" -m grpc_tools.protoc -I "$proto_root" -I "$well_known" --grpc_python_out="$scratch" \
  "${protos[@]}"
# The stubs live in redlockd._proto, not in a top-level `redlock` package (PyPI's redlock-py owns
# that name): point every import of a sibling module (the service modules import their messages,
# election_pb2 and its .pyi import lock_pb2) and the messages' module names there.
for f in lock_pb2.py lock_pb2.pyi lock_pb2_grpc.py election_pb2.py election_pb2.pyi election_pb2_grpc.py; do
  sed -e 's/^from redlock\.v1 import \([a-z_]*_pb2\) as /from redlockd._proto import \1 as /' \
    -e "s/'redlock\.v1\.\([a-z_]*_pb2\)'/'redlockd._proto.\1'/" \
    "$scratch/redlock/v1/$f" > "$out/$f"
done
