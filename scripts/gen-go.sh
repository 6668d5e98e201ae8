#!/usr/bin/env bash
# Generates the Go code for proto/ into the Go module gen/go. It is committed, so that Go
# programs can depend on the module without protoc; `check` proves it is current.
#   gen-go.sh         regenerate gen/go/ragstream/
#   gen-go.sh check   fail when gen/go/ragstream/ differs from what proto/ generates
# protoc-gen-go and protoc-gen-go-grpc are pinned and installed with `go install` into the
# cache on first use; buf (scripts/buf.sh) runs them, so the output names no protoc version.
set -euo pipefail
cd "$(dirname "$0")/.."
PROTOC_GEN_GO=v1.36.12
PROTOC_GEN_GO_GRPC=v1.6.2
cache="${RAGSTREAM_CACHE:-.cache}"
mkdir -p "$cache/go/bin"
bin="$(cd "$cache/go/bin" && pwd)/protoc-gen-go-$PROTOC_GEN_GO-grpc-$PROTOC_GEN_GO_GRPC"
if [ ! -x "$bin/protoc-gen-go" ] || [ ! -x "$bin/protoc-gen-go-grpc" ]; then
  GOBIN="$bin" bash scripts/go.sh install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO"
  GOBIN="$bin" bash scripts/go.sh install \
    "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"
fi
generate() { PATH="$bin:$PATH" bash scripts/buf.sh generate --template gen/go/buf.gen.yaml "$@"; }
case "${1:-generate}" in
  generate)
    rm -rf gen/go/ragstream
    generate ;;
  check)
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    generate --output "$out"
    if ! diff -r gen/go/ragstream "$out/gen/go/ragstream" >&2; then
      echo "gen-go.sh: gen/go is not what proto/ generates: run 'make proto' and commit gen/go" >&2
      exit 1
    fi
    echo "gen-go.sh: gen/go is current" ;;
  *) echo "usage: gen-go.sh [check]" >&2; exit 2 ;;
esac
