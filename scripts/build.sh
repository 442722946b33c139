#!/usr/bin/env bash
# Builds the npm package into pkg/: the wasm-bindgen output (web target),
# an entry per runtime (browser/bundler, node, workerd) that also exports the
# error classes, and a package.json whose `exports` maps them. Prints the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
wasm-pack build --release --target web --out-dir pkg --no-pack >&2
node scripts/strip-wasm.mjs pkg/wow_command_client_bg.wasm
support=$(cd pkg && ls snippets/*/src/js/support.js)
# One glue module and one .d.ts; an entry per runtime, differing only in how
# the .wasm is loaded. Every entry's default export is `init()`: the web
# entry fetches the module, node and workerd have it loaded at import time.
classes="export { CommandError, EffectError } from './${support}';"
cat > pkg/index.js <<JS
// Browsers and bundlers: \`await init()\` fetches the .wasm beside this file.
export * from './wow_command_client.js';
export { default } from './wow_command_client.js';
${classes}
JS
cat > pkg/node.js <<JS
// Node.js: the .wasm is read from disk and instantiated at import time.
import { readFileSync } from 'node:fs';
import { initSync } from './wow_command_client.js';
initSync({ module: readFileSync(new URL('./wow_command_client_bg.wasm', import.meta.url)) });
export * from './wow_command_client.js';
${classes}
export default async function init() {}
JS
cat > pkg/workerd.js <<JS
// Cloudflare Workers (workerd) and other edge runtimes that import .wasm as
// a compiled WebAssembly.Module; instantiated at import time.
import module from './wow_command_client_bg.wasm';
import { initSync } from './wow_command_client.js';
initSync({ module });
export * from './wow_command_client.js';
${classes}
export default async function init() {}
JS
cp adapters/adapters.js adapters/adapters.d.ts adapters/node-adapters.js adapters/node-adapters.d.ts pkg/
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
  "exports": {
    ".": {
      "types": "./index.d.ts",
      "workerd": "./workerd.js",
      "node": "./node.js",
      "browser": "./index.js",
      "default": "./index.js"
    },
    "./web": { "types": "./index.d.ts", "default": "./index.js" },
    "./node": { "types": "./index.d.ts", "default": "./node.js" },
    "./workerd": { "types": "./index.d.ts", "default": "./workerd.js" },
    "./adapters": { "types": "./adapters.d.ts", "default": "./adapters.js" },
    "./adapters/node": { "types": "./node-adapters.d.ts", "default": "./node-adapters.js" },
    "./wasm": "./wow_command_client_bg.wasm",
    "./package.json": "./package.json"
  },
  "sideEffects": ["./snippets/*", "./node.js", "./workerd.js"],
  "files": ["*.js", "*.d.ts", "*.wasm", "snippets"]
}
JSON
wasm=pkg/wow_command_client_bg.wasm
printf 'pkg/: wasm %s bytes (gzip %s), js glue %s bytes\n' \
  "$(wc -c <"$wasm")" "$(gzip -9c "$wasm" | wc -c)" "$(wc -c <pkg/wow_command_client.js)"
