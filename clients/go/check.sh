#!/usr/bin/env bash
# Checks the Go client: generated stubs match the contract, go vet, unit tests (with the race
# detector), and builds target/bin/redlockd-conformance and target/bin/redlockd-example.
# GOPATH mode against Debian's Go packages (no module proxy needed). Runs from any directory.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

missing=()
for tool in go protoc protoc-gen-go protoc-gen-go-grpc; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
[[ -d /usr/share/gocode/src/google.golang.org/grpc ]] || missing+=("/usr/share/gocode/src/google.golang.org/grpc")
[[ -d /usr/share/gocode/src/google.golang.org/protobuf ]] || missing+=("/usr/share/gocode/src/google.golang.org/protobuf")
[[ -d /usr/share/gocode/src/go.opentelemetry.io/otel ]] || missing+=("/usr/share/gocode/src/go.opentelemetry.io/otel")
if (( ${#missing[@]} )); then
  echo "check.sh: missing ${missing[*]}: apt-get install golang-go golang-google-grpc-dev golang-google-protobuf-dev golang-opentelemetry-otel-dev protoc-gen-go protoc-gen-go-grpc protobuf-compiler" >&2
  exit 3
fi

# A GOPATH in which this directory is redlockd.dev/go (its module path).
target="$here/target"
gopath="$target/gopath"
mkdir -p "$gopath/src/redlockd.dev" "$target/bin"
ln -sfn "$here" "$gopath/src/redlockd.dev/go"
export GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOCACHE="${GOCACHE:-$target/gocache}" GOFLAGS=
cd "$gopath/src/redlockd.dev/go"
packages=(./redlockv1 ./redlock ./redlocktrace ./cmd/redlockd-conformance ./cmd/redlockd-example)

echo "== drift: regenerate the stubs and compare with redlockv1/"
fresh="$(mktemp -d -t redlockd-go-check.XXXXXX)"
trap 'rm -rf "$fresh"' EXIT
"$here/generate.sh" "$fresh"
if ! diff -r "$fresh" "$here/redlockv1"; then
  echo "check.sh: redlockv1/ differs from what generate.sh makes from the proto: run generate.sh" >&2
  exit 1
fi

echo "== gofmt"
unformatted="$(gofmt -l redlock redlocktrace cmd)"
if [[ -n "$unformatted" ]]; then
  echo "check.sh: not gofmt-ed: $unformatted" >&2
  exit 1
fi

echo "== go vet"
go vet "${packages[@]}"

echo "== go test -race"
go test -race -count=1 ./redlock ./redlocktrace

echo "== build"
go build -o "$target/bin/redlockd-conformance" ./cmd/redlockd-conformance
go build -o "$target/bin/redlockd-example" ./cmd/redlockd-example
echo "check.sh: ok ($target/bin/redlockd-conformance, $target/bin/redlockd-example)"
