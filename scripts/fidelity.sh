#!/usr/bin/env bash
# The gateway against Wow's OpenAPI document, the long run: schemathesis with
# 25 examples per operation and every phase (npm test runs 5). Any finding
# that is not in tests/gateway/fidelity/departures.json fails it.
#   scripts/fidelity.sh [--examples N] [--record FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cargo build -q -p wow-test-gateway
exec node tests/gateway/fidelity/run.mjs --examples 25 "$@"
