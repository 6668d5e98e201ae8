#!/usr/bin/env bash
# `make test`: lint, then the whole suite. The helm binary and the container image the tests
# use are built meanwhile, beside the lint (minutes on a fresh machine, reused after); the
# suite starts once both are ready. A build that fails shows its log and stops the run.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .cache
bash scripts/helm.sh path >.cache/helm-build.log 2>&1 &
helm=$!
bash scripts/image.sh build >.cache/image-build.log 2>&1 &
image=$!
trap 'kill "$helm" "$image" 2>/dev/null || true' EXIT
make --no-print-directory lint
bash scripts/chromium.sh >/dev/null
for build in helm image; do
  if ! wait "${!build}"; then
    tail -n 40 ".cache/$build-build.log" >&2
    echo "test.sh: the $build build failed; its log is .cache/$build-build.log" >&2
    exit 1
  fi
done
trap - EXIT
RAGSTREAM_TEST_DATA="${DATA:?}" .venv/bin/python -m pytest -q --durations=25 tests --ignore=tests/bench
