#!/usr/bin/env bash
# Rebuilds the console's vendored graph libraries from the versions package-lock.json pins:
# sigma.js, graphology and graphology-layout-forceatlas2 bundled by esbuild into one ES
# module (the console is static files: no bundler or CDN at run time), and the licence of
# every package the bundle holds beside it. Run after changing package.json; commit the
# package-lock.json and the files in the console's vendor/ folder together.
#   tools/console/build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vendor="$here/../../services/query/ragstream/query/transport/http/console/vendor"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
rm -rf "$vendor" && mkdir -p "$vendor/licences"
node_modules/.bin/esbuild entry.js --bundle --format=esm --minify --target=es2020 \
  --legal-comments=none --metafile=node_modules/.meta.json --outfile="$vendor/graph-libs.js"
# The packages whose code is in the bundle, read from esbuild's record of its inputs.
node -e '
  const inputs = Object.keys(require("./node_modules/.meta.json").inputs);
  const names = new Set(inputs.map((p) => p.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1]).filter(Boolean));
  console.log([...names].sort().join("\n"));
' | while read -r package; do
  version=$(node -p "require('./node_modules/$package/package.json').version")
  licence=$(ls node_modules/"$package"/ | grep -iE '^(licen[cs]e|copying)' | head -1)
  if [ -z "$licence" ]; then echo "build.sh: $package ships no licence file" >&2; exit 1; fi
  cp "node_modules/$package/$licence" "$vendor/licences/${package//\//_}-$version.txt"
done
ls -l "$vendor" "$vendor/licences"
