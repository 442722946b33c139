#!/usr/bin/env bash
# Cargo's runner for wasm32 test binaries (.cargo/config.toml): Node test
# binaries run in wasm-bindgen-test-runner; browser test binaries run in
# headless Chromium driven by playwright-core (scripts/wasm-test-runner.mjs
# says why not through WebDriver). Nothing is retried.
exec node "$(dirname "$0")/wasm-test-runner.mjs" "$@"
