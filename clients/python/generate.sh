#!/usr/bin/env bash
# Regenerates the committed Python stubs in src/redlockd/_proto/ from the contract in proto/.
# Usage: generate.sh [OUTDIR]   (default: src/redlockd/_proto next to this script; check.sh passes
# a temp dir and compares the result with what is committed.)
#
# The messages (lock_pb2.py, lock_pb2.pyi) come from Debian's protoc 3.21 (protobuf-compiler),
# the service module (lock_pb2_grpc.py) from Debian's grpc_tools (python3-grpc-tools). Why not
# grpc_tools for both: its bundled libprotoc is 3.5.1, whose lock_pb2.py builds descriptors by
# hand, which protobuf >= 4 refuses under its upb backend; and it cannot write .pyi files.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto_root="$(cd "$here/../../proto/src/main/proto" && pwd)"
out="${1:-$here/src/redlockd/_proto}"
python=/usr/bin/python3
well_known="$("$python" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
mkdir -p "$out"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
protoc -I "$proto_root" --python_out="$scratch" --pyi_out="$scratch" "$proto_root/redlock/v1/lock.proto"
"$python" -m grpc_tools.protoc -I "$proto_root" -I "$well_known" --grpc_python_out="$scratch" \
  "$proto_root/redlock/v1/lock.proto"
# The stubs live in redlockd._proto, not in a top-level `redlock` package (PyPI's redlock-py owns
# that name): point the service module's import and the messages' module name there.
sed -e 's/^from redlock\.v1 import lock_pb2 as /from redlockd._proto import lock_pb2 as /' \
  "$scratch/redlock/v1/lock_pb2_grpc.py" > "$out/lock_pb2_grpc.py"
sed -e "s/'redlock\.v1\.lock_pb2'/'redlockd._proto.lock_pb2'/" \
  "$scratch/redlock/v1/lock_pb2.py" > "$out/lock_pb2.py"
cp "$scratch/redlock/v1/lock_pb2.pyi" "$out/lock_pb2.pyi"
