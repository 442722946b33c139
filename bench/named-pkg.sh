#!/usr/bin/env bash
# A package whose client module keeps its function names and whose glue is
# not minified, for reading a CPU profile (`node bench/run.mjs --only
# concurrency --skip-core --cpu-profile --rounds 1 --pkg DIR`): the shipped
# build's toolchain and flags (profile size-report), bound by wasm-bindgen
# with no renaming, beside the rest of the package as scripts/build.sh made it.
#   bench/named-pkg.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
[ -f pkg/index.js ] || scripts/build.sh >/dev/null
. scripts/release-toolchain.sh
RUSTUP_TOOLCHAIN=$RELEASE_TOOLCHAIN RUSTFLAGS="$RELEASE_RUSTFLAGS" \
  cargo build -q --profile size-report --lib --target wasm32-unknown-unknown $RELEASE_BUILD_STD \
    --target-dir target/release-wasm
rm -rf "$out" && cp -r pkg "$out"
rm -rf "$out/snippets" "$out"/wow_command_client*
wasm-bindgen --target web --out-dir "$out" --out-name wow_command_client \
  target/release-wasm/wasm32-unknown-unknown/size-report/wow_command_client.wasm 2> >(grep -v target_features >&2)
# The closure shims nothing reaches, emptied as in the shipped build.
node scripts/drop-closure-shims.mjs "$out/wow_command_client_bg.wasm" 2>/dev/null
# The consumer's glue imports the snippets too: the same files, by the same crate hash.
cp -rn pkg/snippets "$out/" 2>/dev/null || true
# Bundled with its snippets as the shipped glue is (the entry imports its error class from it).
node scripts/bundle-glue.mjs "$out/wow_command_client.js" CommandError "$(cd "$out" && ls -d snippets/*)/src/js/support.js"
echo "$out: the client module with its names ($(wc -c <"$out/wow_command_client_bg.wasm") bytes)"
