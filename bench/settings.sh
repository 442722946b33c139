#!/usr/bin/env bash
# Which build settings make the smallest download: opt-level "z" and "s",
# each with and without wasm-opt (npm `binaryen`) at -Oz / -Os. Builds into
# a scratch directory; prints raw and gzip of the .wasm per variant.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
gz() { gzip -9c "$1" | wc -c; }
printf '%-28s %10s %10s\n' "variant" "raw" "gzip"
for level in z s; do
  CARGO_PROFILE_RELEASE_OPT_LEVEL=$level wasm-pack build --release --target web \
    --out-dir "$scratch/$level" --no-pack >/dev/null 2>&1
  wasm="$scratch/$level/wow_command_client_bg.wasm"
  printf '%-28s %10s %10s\n' "opt-level=$level" "$(wc -c <"$wasm")" "$(gz "$wasm")"
  for pass in Oz Os; do
    node_modules/.bin/wasm-opt "-$pass" --enable-bulk-memory --enable-nontrapping-float-to-int \
      --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
      "$wasm" -o "$scratch/$level-$pass.wasm"
    printf '%-28s %10s %10s\n' "opt-level=$level + wasm-opt -$pass" \
      "$(wc -c <"$scratch/$level-$pass.wasm")" "$(gz "$scratch/$level-$pass.wasm")"
  done
done
