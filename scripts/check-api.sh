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
echo "api: the .d.ts matches its reference and tests/api/usage.ts type-checks"
