#!/usr/bin/env bash
# Makes sure Debian's headless-capable Chromium is installed for the browser tests, with a
# font holding Chinese glyphs (Noto CJK: the console draws the demo's Chinese entity names),
# and prints the browser's path. Installs the `chromium` and `fonts-noto-cjk` packages with
# apt-get when missing (root, as in CI on a fresh machine); otherwise says what to run.
# Parallel runs wait for the first.
#   chromium.sh          install if missing, print the binary's path
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${RAGSTREAM_CHROMIUM:-/usr/bin/chromium}
has_cjk_font() { fc-list :lang=zh 2>/dev/null | grep -q .; }
missing=()
[ -x "$binary" ] || missing+=(chromium)
has_cjk_font || missing+=(fonts-noto-cjk)
if [ ${#missing[@]} = 0 ]; then
  echo "$binary"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "chromium.sh: ${missing[*]} missing; install with: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
mkdir -p .cache
exec 9>.cache/chromium.lock
flock 9
if [ ! -x "$binary" ] || ! has_cjk_font; then
  echo "chromium.sh: installing Debian's ${missing[*]} (first use only)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends chromium fonts-noto-cjk >&2
fi
echo "$binary"
