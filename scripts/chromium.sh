#!/usr/bin/env bash
# Makes sure Debian's headless-capable Chromium is installed for the browser tests, and
# prints its path. Installs the `chromium` package with apt-get when it is missing (root,
# as in CI on a fresh machine); otherwise says what to run. Parallel runs wait for the first.
#   chromium.sh          install if missing, print the binary's path
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${RAGSTREAM_CHROMIUM:-/usr/bin/chromium}
if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "chromium.sh: $binary is missing; install it with: sudo apt-get install -y chromium" >&2
  exit 1
fi
mkdir -p .cache
exec 9>.cache/chromium.lock
flock 9
if [ ! -x "$binary" ]; then
  echo "chromium.sh: installing Debian's chromium (first use only)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends chromium >&2
fi
echo "$binary"
