#!/usr/bin/env bash
# Builds the npm package into pkg/ (web target): the wasm-bindgen output plus
# an `index.js` entry that also exports the CommandError class, and a
# package.json. Prints the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
wasm-pack build --release --target web --out-dir pkg --no-pack >&2
support=$(cd pkg && ls snippets/*/src/js/support.js)
cat > pkg/index.js <<JS
export * from './wow_command_client.js';
export { default } from './wow_command_client.js';
export { CommandError } from './${support}';
JS
cat > pkg/index.d.ts <<'TS'
export * from './wow_command_client.js';
export { default } from './wow_command_client.js';
TS
version=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
cat > pkg/package.json <<JSON
{
  "name": "wow-command-client",
  "version": "${version}",
  "description": "Send commands to a Wow command gateway without ever losing or duplicating a business intent.",
  "license": "Apache-2.0",
  "type": "module",
  "main": "index.js",
  "module": "index.js",
  "types": "index.d.ts",
  "sideEffects": ["./snippets/*"],
  "files": ["*.js", "*.d.ts", "*.wasm", "snippets"]
}
JSON
wasm=pkg/wow_command_client_bg.wasm
printf 'pkg/: wasm %s bytes (gzip %s), js glue %s bytes\n' \
  "$(wc -c <"$wasm")" "$(gzip -9c "$wasm" | wc -c)" "$(wc -c <pkg/wow_command_client.js)"
