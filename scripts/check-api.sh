#!/usr/bin/env bash
# The generated TypeScript surface is reviewed like code: it must match the
# committed reference (tests/api/wow_command_client.d.ts), and the usage
# example must type-check against it. After an intended change:
#   npm run build && scripts/check-api.sh --accept
set -euo pipefail
cd "$(dirname "$0")/.."
surface() { sed '/^export type InitInput/,$d' "$1"; }
if [ "${1:-}" = "--accept" ]; then
  surface pkg/wow_command_client.d.ts > tests/api/wow_command_client.d.ts
fi
if ! diff -u tests/api/wow_command_client.d.ts <(surface pkg/wow_command_client.d.ts); then
  echo "the generated .d.ts differs from tests/api/wow_command_client.d.ts (review, then --accept)"
  exit 1
fi
npx tsc -p tests/api/tsconfig.json
echo "api: the .d.ts matches its reference and tests/api/usage.ts type-checks"
