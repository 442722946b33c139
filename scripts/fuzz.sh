#!/usr/bin/env bash
# `npm run fuzz [-- SECONDS]`: the JS boundary fuzz (tests/fuzz/, fast-check)
# at length in Node.js and Chromium (FUZZ_RUNS, default 20000 and 3000;
# FUZZ_SEED, default the time), then each cargo-fuzz target for SECONDS
# (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
scripts/build.sh >/dev/null
cargo build -q -p wow-test-gateway
seed=${FUZZ_SEED:-$(date +%s)}
echo "JS boundary fuzz, seed $seed"
FUZZ_SEED=$seed FUZZ_RUNS=${FUZZ_RUNS:-20000} node --test tests/fuzz/node.test.mjs
FUZZ_SEED=$seed FUZZ_RUNS=${FUZZ_RUNS:-3000} TEST_ENGINES=${TEST_ENGINES:-chromium} node --test tests/fuzz/browsers.test.mjs
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for target in sse_decoder json_body; do
  cargo +nightly fuzz run "$target" -- -max_total_time="$secs"
done
