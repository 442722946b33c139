#!/usr/bin/env bash
# `npm test`: every suite, in order, failing fast; a summary of each suite's
# closing line at the end so a reader sees how many tests ran where.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh

logs=$(mktemp -d)
summary=()
suite() {
  local name=$1; shift
  printf '\n=== %s: %s\n' "$name" "$*"
  if ! "$@" 2>&1 | tee "$logs/$name.log"; then
    printf '\n*** suite %s FAILED\n' "$name"
    exit 1
  fi
  local closing
  closing=$(grep -E '^test result:|^# (pass|fail)|[0-9]+ passed, [0-9]+ failed' "$logs/$name.log" \
    | awk '{$1=$1};1' | paste -sd ';' - || true)
  summary+=("$(printf '%-18s %s' "$name" "${closing:-ok}")")
}

export CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
WASM_RUNNER=(env CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner)

suite fmt            cargo fmt --all --check
suite clippy         cargo clippy --workspace --all-targets --all-features -- -D warnings
suite clippy-wasm    cargo clippy --target wasm32-unknown-unknown --lib -- -D warnings
suite native         cargo test -p wow-command-client --all-features
suite gateway        cargo test -p wow-test-gateway
suite wasm-chromium  "${WASM_RUNNER[@]}" WASM_BINDGEN_USE_BROWSER=1 \
                     cargo test --target wasm32-unknown-unknown --lib --test web_storage --test storage_adapter
suite wasm-node      "${WASM_RUNNER[@]}" cargo test --target wasm32-unknown-unknown --lib --test storage_adapter

printf '\n=== summary\n'
printf '%s\n' "${summary[@]}"
