#!/usr/bin/env bash
# Runs the machine's Go with its module and build caches under the project's cache, so the
# Go client's build and the code generator reuse what an earlier run downloaded and built.
#   go.sh ARGS...   e.g. go.sh -C examples/go build -o /tmp/client .
# Modules come from the configured module proxy; GOTOOLCHAIN=local never fetches a toolchain.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${RAGSTREAM_CACHE:-$root/.cache}/go"
command -v go >/dev/null || { echo "go.sh: Go is not installed" >&2; exit 127; }
export GOMODCACHE="$cache/mod" GOCACHE="$cache/build" GOTOOLCHAIN=local
# -modcacherw: the module cache stays deletable; -buildvcs=false: builds from a worktree too.
export GOFLAGS="-modcacherw -buildvcs=false"
exec go "$@"
