#!/usr/bin/env bash
# `npm run fuzz [-- SECONDS]`: runs each fuzz target for SECONDS (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for target in sse_decoder json_body; do
  cargo +nightly fuzz run "$target" -- -max_total_time="$secs"
done
