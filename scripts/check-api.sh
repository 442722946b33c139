#!/usr/bin/env bash
# The generated TypeScript surface is reviewed like code: each entry's must
# match its committed reference (tests/api/wow_command_client.d.ts for the
# client, tests/api/consumer.d.ts for the consumer), and the usage example
# must type-check against them. After an intended change:
#   npm run build && scripts/check-api.sh --accept
set -euo pipefail
cd "$(dirname "$0")/.."
surface() { sed '/^export type InitInput/,$d' "$1"; }
for api in wow_command_client consumer; do
  if [ "${1:-}" = "--accept" ]; then
    surface "pkg/$api.d.ts" > "tests/api/$api.d.ts"
  fi
  if ! diff -u "tests/api/$api.d.ts" <(surface "pkg/$api.d.ts"); then
    echo "the generated pkg/$api.d.ts differs from tests/api/$api.d.ts (review, then --accept)"
    exit 1
  fi
done
npx tsc -p tests/api/tsconfig.json
# Each wire type declared with the fields its Rust writer writes (the core's
# wire_fields test pins those in tests/api/wire-fields.json).
node tests/api/wire-fields.mjs >/dev/null
# The generator's output is reviewed the same way: one aggregate of Wow's own
# example document, and the demo's commands generated from the gateway's.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node generator/cli.mjs generate --input tests/fixtures/wow-8.10.10/example-domain-openapi.json \
  --out "$work/reference" 2>/dev/null
scripts/generate-demo.sh "$work/demo"
if [ "${1:-}" = "--accept" ]; then
  mkdir -p tests/api/generated/example
  cp "$work/reference/example/cart.ts" tests/api/generated/example/cart.ts
  rm -rf www/generated && cp -r "$work/demo" www/generated
fi
if ! diff -u tests/api/generated/example/cart.ts "$work/reference/example/cart.ts"; then
  echo "the generator's output for Wow's example cart differs from tests/api/generated/example/cart.ts (review, then --accept)"
  exit 1
fi
if ! diff -ru www/generated "$work/demo"; then
  echo "www/generated is not what scripts/generate-demo.sh produces from the gateway's document (review, then --accept)"
  exit 1
fi
echo "api: the .d.ts matches its reference and declares each wire type as written, tests/api/usage.ts type-checks, the generated commands match theirs"
