#!/usr/bin/env bash
# Builds and tests the Python client (the sync client and redlockd.aio): stubs checked against
# the proto, the package installed into target/venv, mypy --strict on it, on the conformance
# runners (runner.py, runner_aio.py) and on the examples, the unit tests run, the runners and the
# examples compiled. Exit 3 when the runtime (Debian's Python gRPC packages) is missing, non-zero
# on any other failure. Runnable from any directory.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python=/usr/bin/python3

if ! [ -x "$python" ] || ! "$python" -c 'import grpc, grpc_tools, google.protobuf, mypy' >/dev/null 2>&1 \
    || ! command -v protoc >/dev/null 2>&1; then
  echo "python client needs /usr/bin/python3 with grpc, grpc_tools and mypy, and protoc: apt-get install python3-grpcio python3-grpc-tools python3-protobuf python3-venv protobuf-compiler mypy"
  exit 3
fi

echo "== drift check: regenerating the stubs from proto/"
fresh="$(mktemp -d -t redlockd-python-check.XXXXXX)"
trap 'rm -rf "$fresh"' EXIT
"$here/generate.sh" "$fresh"
for f in lock_pb2.py lock_pb2.pyi lock_pb2_grpc.py election_pb2.py election_pb2.pyi election_pb2_grpc.py; do
  if ! diff -u "$here/src/redlockd/_proto/$f" "$fresh/$f"; then
    echo "src/redlockd/_proto/$f is out of date with proto/: run clients/python/generate.sh" >&2
    exit 1
  fi
done
echo "stubs match the proto"

echo "== venv and install"
venv="$here/target/venv"
"$python" -m venv --system-site-packages "$venv"
# A fresh copy of the sources each run (no build dir left behind in the source tree).
build="$fresh/build"
mkdir -p "$build"
cp -r "$here/pyproject.toml" "$here/README.md" "$here/src" "$build/"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
  --force-reinstall "$build"
"$venv/bin/python" -c 'import redlockd, sys; print("installed redlockd", redlockd.__version__, "into", sys.prefix)'

echo "== mypy --strict (mypy.ini: the package, the runners, the examples)"
cd "$here"
"$python" -m mypy --config-file mypy.ini

echo "== unit tests"
"$venv/bin/python" -m unittest discover -s tests -v

echo "== runner and example compile"
"$venv/bin/python" -m py_compile conformance/runner.py conformance/runner_aio.py examples/*.py
echo "check.sh: OK"
