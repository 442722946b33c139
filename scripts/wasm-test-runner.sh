#!/usr/bin/env bash
# Cargo's runner for wasm32 test binaries: wasm-bindgen-test-runner, retried
# only when the headless browser harness never got as far as starting the
# tests (its page stalls while loading now and then). A run in which any test
# started is never retried: its result stands.
set -uo pipefail
for try in 1 2 3; do
  out=$(mktemp)
  wasm-bindgen-test-runner "$@" 2>&1 | tee "$out"
  status=${PIPESTATUS[0]}
  if [ "$status" -eq 0 ] || grep -qE '^running [0-9]+ tests?' "$out"; then
    rm -f "$out"
    exit "$status"
  fi
  rm -f "$out"
  echo "[wasm-test-runner] the browser harness did not start the tests (try $try of 3)" >&2
done
exit "$status"
