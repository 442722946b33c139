#!/usr/bin/env bash
# Builds the npm package into pkg/: two wasm modules from the same crate, the
# command client (feature `client`, the main entry) and the idempotent
# consumer (feature `consumer`, the `./consumer` entry), so an app downloads
# only what it imports; an entry per runtime (browser/bundler, node, workerd)
# for each, exporting its error class; and a package.json whose `exports`
# maps them. Prints the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
. scripts/release-toolchain.sh
rm -rf pkg
# One module per API: cargo with the pinned nightly (std rebuilt with
# immediate-abort panics), then wasm-bindgen for the web target. Both glue
# modules import the same snippets (same crate, same files): one copy in pkg/.
# The command client's glue is crash-only (src/web/instance.js): built with
# wasm-bindgen's reset function, its exports guarded (scripts/guard-glue.mjs).
module() { # out-name, cargo feature arguments
  local name=$1; shift
  local reset=()
  [ "$name" = wow_command_client ] && reset=(--experimental-reset-state-function)
  RUSTUP_TOOLCHAIN=$RELEASE_TOOLCHAIN RUSTFLAGS="$RELEASE_RUSTFLAGS" \
    cargo build --release --lib --target wasm32-unknown-unknown $RELEASE_BUILD_STD \
      --target-dir target/release-wasm "$@" >&2
  wasm-bindgen --target web "${reset[@]}" --out-dir pkg --out-name "$name" \
    target/release-wasm/wasm32-unknown-unknown/release/wow_command_client.wasm 2> >(grep -v target_features >&2)
  [ "$name" = wow_command_client ] && node scripts/guard-glue.mjs "pkg/${name}.js"
  node scripts/drop-closure-shims.mjs "pkg/${name}_bg.wasm"
  node scripts/strip-wasm.mjs "pkg/${name}_bg.wasm"
  # Chosen binaryen passes only (npm `binaryen`): identical functions merged
  # (monomorphised copies), what nothing reaches dropped, peephole rewrites,
  # locals renumbered by use, the target_features section dropped; then a
  # second round, chosen one pass at a time by what it saves of the gzip
  # (branches, no-ops, identical tails folded, blocks merged, locals reused).
  # -Oz as a whole makes the gzip larger (docs/benchmarks.md); these make it smaller.
  node_modules/.bin/wasm-opt --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    --duplicate-function-elimination --reorder-locals --remove-unused-module-elements \
    --optimize-instructions --strip-target-features \
    --remove-unused-brs --optimize-instructions --vacuum --duplicate-function-elimination --code-folding \
    --simplify-locals-nostructure --merge-blocks --remove-unused-names --coalesce-locals-learning \
    --reorder-locals --vacuum "pkg/${name}_bg.wasm" -o "pkg/${name}_bg.wasm"
  # wasm-bindgen declares `[Symbol.dispose]()` on every class, which a lib
  # before esnext.disposable does not know (TS2550 under es2022 without
  # skipLibCheck). Declaring the symbol merges with the lib where it has it,
  # so `using client = …` still type-checks there.
  sed -i '0,/^\/\* eslint-disable \*\//s//&\n\ndeclare global {\n  interface SymbolConstructor { readonly dispose: unique symbol }\n}/' "pkg/${name}.d.ts"
  node scripts/document-dts.mjs "pkg/${name}.d.ts"
}
module wow_command_client
module consumer --no-default-features --features consumer
snippets=$(cd pkg && ls -d snippets/*)
# Each glue with its snippets in one file, exporting its error class.
node scripts/bundle-glue.mjs pkg/wow_command_client.js CommandError "${snippets}/src/js/support.js"
node scripts/bundle-glue.mjs pkg/consumer.js EffectError "${snippets}/src/js/effect_error.js"
# The glue and the snippets, minified (terser): what a browser downloads.
node scripts/minify-js.mjs pkg/wow_command_client.js pkg/consumer.js $(find pkg/snippets -name '*.js')
# Short names for each module's imports from its glue, in both (the hash
# digits of wasm-bindgen's names are what gzip cannot shrink).
node scripts/short-imports.mjs pkg/wow_command_client_bg.wasm pkg/wow_command_client.js
node scripts/short-imports.mjs pkg/consumer_bg.wasm pkg/consumer.js
# A glue module and a .d.ts per API; an entry per runtime, differing only in
# how the .wasm is loaded. Every entry's default export is `init()`: the web
# entry fetches the module, node and workerd have it loaded at import time.
entries() { # glue, wasm, error class (exported by the bundled glue):its snippet, web entry, node entry, workerd entry, Class.opener
  local glue=$1 wasm=$2 classes="export { ${3%%:*} } from './$1.js';"
  local class=${7%%.*} opener=${7#*.}
  # The web entry's opener loads the module itself when init() was not
  # called (the .wasm beside the glue; an init() under way is awaited), and
  # says to call init() when that load fails: before, it was a TypeError
  # reading a property of undefined.
  cat > "pkg/$4" <<JS
// Browsers and bundlers: \`await init()\` fetches the .wasm beside this file (${class}.${opener} does, if not yet).
import init, { ${class} as C } from './${glue}.js';
export * from './${glue}.js';
export { default } from './${glue}.js';
${classes}
const o = C.${opener};
C.${opener} = async (options) => {
  await init().catch((e) => { throw Error("${class}.${opener}: the .wasm did not load (" + e.message + "); call \`await init(wasmUrl)\` first", { cause: e }); });
  return o(options);
};
JS
  cat > "pkg/$5" <<JS
// Node.js: the .wasm is read from disk and instantiated at import time.
import { readFileSync } from 'node:fs';
import { initSync } from './${glue}.js';
initSync({ module: readFileSync(new URL('./${wasm}', import.meta.url)) });
export * from './${glue}.js';
${classes}
export default async function init() {}
JS
  cat > "pkg/$6" <<JS
// Cloudflare Workers (workerd) and other edge runtimes that import .wasm as
// a compiled WebAssembly.Module; instantiated at import time.
import module from './${wasm}';
import { initSync } from './${glue}.js';
initSync({ module });
export * from './${glue}.js';
${classes}
export default async function init() {}
JS
}
entries wow_command_client wow_command_client_bg.wasm CommandError:support.js index.js node.js workerd.js WowClient.connect
entries consumer consumer_bg.wasm EffectError:effect_error.js consumer-web.js consumer-node.js consumer-workerd.js IdempotentConsumer.open
# The web entries are downloaded on every cold load too.
node scripts/minify-js.mjs pkg/index.js pkg/consumer-web.js
cp adapters/adapters.js adapters/adapters.d.ts adapters/node-adapters.js adapters/node-adapters.d.ts pkg/
# React bindings: a separate entry, so the client-only download does not change.
cp react/react.js react/react.d.ts pkg/
node scripts/minify-js.mjs pkg/react.js
# The devtools panel: a separate entry, loaded only by apps that import it.
cp devtools/devtools.js devtools/devtools.d.ts pkg/
node scripts/minify-js.mjs pkg/devtools.js
# The Service Worker entry: resume() from the same IndexedDB journal when no page is there.
cp worker/service-worker.js worker/service-worker.d.ts pkg/
# The command generator (`npx wow-command-client generate`, Node only) and what a package carries.
mkdir -p pkg/generator
cp generator/generate.mjs generator/generate.d.ts generator/cli.mjs pkg/generator/
# The README and the guides it links to, so its links resolve in node_modules too.
cp README.md CONTRIBUTING.md CHANGELOG.md LICENSE pkg/
mkdir -p pkg/docs && cp docs/*.md docs/*.png pkg/docs/
cat > pkg/index.d.ts <<'TS'
export * from './wow_command_client.js';
export { default } from './wow_command_client.js';
TS
cat > pkg/consumer-web.d.ts <<'TS'
export * from './consumer.js';
export { default } from './consumer.js';
TS
version=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
cat > pkg/package.json <<JSON
{
  "name": "wow-command-client",
  "version": "${version}",
  "description": "Send commands to a Wow command gateway without ever losing or duplicating a business intent.",
  "license": "Apache-2.0",
  "repository": { "type": "git", "url": "git+https://github.com/wow-command-client/wow-command-client.git" },
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
    "./consumer": {
      "types": "./consumer-web.d.ts",
      "workerd": "./consumer-workerd.js",
      "node": "./consumer-node.js",
      "browser": "./consumer-web.js",
      "default": "./consumer-web.js"
    },
    "./adapters": { "types": "./adapters.d.ts", "default": "./adapters.js" },
    "./service-worker": { "types": "./service-worker.d.ts", "default": "./service-worker.js" },
    "./adapters/node": { "types": "./node-adapters.d.ts", "default": "./node-adapters.js" },
    "./react": { "types": "./react.d.ts", "default": "./react.js" },
    "./devtools": { "types": "./devtools.d.ts", "default": "./devtools.js" },
    "./generator": { "types": "./generator/generate.d.ts", "default": "./generator/generate.mjs" },
    "./wasm": "./wow_command_client_bg.wasm",
    "./package.json": "./package.json"
  },
  "bin": { "wow-command-client": "./generator/cli.mjs" },
  "peerDependencies": { "openapi-typescript": "^7.13.0", "react": ">=18" },
  "peerDependenciesMeta": { "openapi-typescript": { "optional": true }, "react": { "optional": true } },
  "engines": { "node": ">=18" },
  "sideEffects": ["./snippets/*", "./index.js", "./consumer-web.js", "./node.js", "./workerd.js", "./consumer-node.js", "./consumer-workerd.js"],
  "files": ["*.js", "*.d.ts", "*.wasm", "snippets", "generator", "docs/*.md", "docs/*.png", "README.md", "CONTRIBUTING.md", "CHANGELOG.md", "LICENSE"]
}
JSON
for api in wow_command_client consumer; do
  wasm=pkg/${api}_bg.wasm
  printf 'pkg/: %s: wasm %s bytes (gzip %s), js glue %s bytes\n' "$api" \
    "$(wc -c <"$wasm")" "$(gzip -9c "$wasm" | wc -c)" "$(wc -c <"pkg/$api.js")"
done
