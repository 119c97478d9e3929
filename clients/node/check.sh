#!/usr/bin/env bash
# Builds and checks the Node client: clean install (which builds), the drift check and the
# unit tests, and the npm tarball. Exits 3 when node or npm is not installed.
set -euo pipefail

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "clients/node/check.sh: $tool is not installed; skipping the Node client"
    exit 3
  fi
done

here="${BASH_SOURCE[0]%/*}"
[ "$here" = "${BASH_SOURCE[0]}" ] && here=.
cd "$here"

npm ci --no-audit --no-fund # its prepare script builds dist/ (tsc)
# Already built: without the pretest and prepare builds, which would compile the same sources twice more.
npm test --ignore-scripts
mkdir -p target
rm -f target/redlockd-client-*.tgz
npm pack --ignore-scripts --pack-destination target/
echo "clients/node/check.sh: OK ($(ls target/redlockd-client-*.tgz))"
