#!/usr/bin/env bash
# Builds the npm package into pkg/ (web target) and prints its size.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
wasm-pack build --release --target web --out-dir pkg --no-pack >&2
wasm=pkg/wow_command_client_bg.wasm
printf 'pkg/: wasm %s bytes (gzip %s), js glue %s bytes\n' \
  "$(wc -c <"$wasm")" "$(gzip -9c "$wasm" | wc -c)" "$(wc -c <pkg/wow_command_client.js)"
