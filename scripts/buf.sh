#!/usr/bin/env bash
# Runs buf (installed from the npm registry into .cache/tools on first use).
#   buf.sh lint       STANDARD lint rules on proto/
#   buf.sh breaking   wire and source compatibility against the last commit on main that has proto/
set -euo pipefail
cd "$(dirname "$0")/.."
tools=.cache/tools
buf="$tools/node_modules/.bin/buf"
if [ ! -x "$buf" ]; then
  mkdir -p "$tools"
  npm install --silent --prefix "$tools" @bufbuild/buf@1.75.0 >/dev/null
fi
case "${1:-lint}" in
  lint) "$buf" lint proto ;;
  breaking)
    base=$(git merge-base HEAD main 2>/dev/null || git rev-parse HEAD 2>/dev/null || true)
    if [ -n "$base" ] && git cat-file -e "$base:proto/buf.yaml" 2>/dev/null; then
      "$buf" breaking proto --against ".git#ref=$base,subdir=proto"
      echo "buf breaking: proto/ is compatible with $base"
    else
      echo "buf breaking: no committed proto/ to compare with yet"
    fi ;;
  *) echo "usage: buf.sh lint|breaking" >&2; exit 2 ;;
esac
