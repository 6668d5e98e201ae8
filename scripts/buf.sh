#!/usr/bin/env bash
# Runs buf (installed from the npm registry into .cache/tools on first use).
#   buf.sh lint       STANDARD and COMMENTS lint rules on proto/ (see proto/buf.yaml)
#   buf.sh breaking   wire and source compatibility against the last commit on main that has proto/
#   buf.sh generate   buf generate on proto/ with the remaining arguments (see scripts/gen-go.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
tools=.cache/tools
buf="$tools/node_modules/.bin/buf"
if [ ! -x "$buf" ]; then
  mkdir -p "$tools"
  npm install --silent --prefix "$tools" @bufbuild/buf@1.75.0 >/dev/null
fi
first_options='"FILE_SAME_GO_PACKAGE","FILE_SAME_JAVA_PACKAGE","FILE_SAME_JAVA_MULTIPLE_FILES",'
first_options+='"FILE_SAME_JAVA_OUTER_CLASSNAME","FILE_SAME_CSHARP_NAMESPACE"'
case "${1:-lint}" in
  lint) "$buf" lint proto ;;
  generate) shift; "$buf" generate proto "$@" ;;
  breaking)
    base=$(git merge-base HEAD main 2>/dev/null || git rev-parse HEAD 2>/dev/null || true)
    if [ -n "$base" ] && git cat-file -e "$base:proto/buf.yaml" 2>/dev/null; then
      if git grep -q "option go_package" "$base" -- proto/; then
        "$buf" breaking proto --against ".git#ref=$base,subdir=proto"
      else
        # The base predates the language options (go_package, java_*, csharp_namespace):
        # setting them for the first time is allowed once; every later change is checked.
        (cd proto && "../$buf" breaking --against "../.git#ref=$base,subdir=proto" \
          --config "{\"version\":\"v2\",\"breaking\":{\"use\":[\"FILE\"],\"except\":[$first_options]}}")
      fi
      echo "buf breaking: proto/ is compatible with $base"
    else
      echo "buf breaking: no committed proto/ to compare with yet"
    fi ;;
  *) echo "usage: buf.sh lint|breaking|generate ARGS..." >&2; exit 2 ;;
esac
