#!/usr/bin/env bash
# The demo's commands: generated from the test gateway's own OpenAPI document
# (what it serves at /v3/api-docs) with `wow-command-client generate`, then
# compiled to JavaScript for the page. `scripts/check-api.sh` checks that
# www/generated is what this produces.
#   scripts/generate-demo.sh [OUT_DIR]   (default: www/generated; needs pkg/ built)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-www/generated}
cargo build -q -p wow-test-gateway
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target/debug/wow-test-gateway --print-openapi > "$work/api-docs.json"
node generator/cli.mjs generate --input "$work/api-docs.json" --out "$work/ts" \
  --hints www/commands.hints.json 2> "$work/log" || { cat "$work/log" >&2; exit 1; }
if grep -q '^warning' "$work/log"; then cat "$work/log" >&2; exit 1; fi
cat > "$work/ts/tsconfig.json" <<JSON
{
  "compilerOptions": {
    "strict": true, "target": "es2022", "module": "es2022", "moduleResolution": "bundler",
    "lib": ["es2022", "esnext.disposable", "dom"], "types": [], "skipLibCheck": false,
    "paths": { "wow-command-client": ["$(pwd)/pkg/index.d.ts"] },
    "outDir": "$work/js", "removeComments": false, "newLine": "lf"
  },
  "include": ["**/*.ts"]
}
JSON
npx tsc -p "$work/ts/tsconfig.json"
rm -rf "$out"
mkdir -p "$out"
cp -r "$work/js/." "$out/"
