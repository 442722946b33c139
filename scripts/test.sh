#!/usr/bin/env bash
# `npm test`: every suite, in order, failing fast; a summary of each suite's
# counts at the end, so a reader sees how many tests ran where and how many
# were skipped. A suite that ran no test fails, and under CI=true so does one
# that skipped any: a run is never green by leaving something out.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh

logs=$(mktemp -d)
summary=()
# The counts of a suite's log: cargo's and node's test totals summed over
# the binaries and files it ran, and the closing lines of the other checks.
counts() {
  awk '
    /^test result: / { cargo = 1; for (i = 1; i <= NF; i++) {
        if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
    /^# tests [0-9]+$/ { node = 1; t += $3 } /^# pass [0-9]+$/ { p += $3 } /^# fail [0-9]+$/ { f += $3 }
    /^# skipped [0-9]+$/ { s += $3 }
    /^(pkg\/:|api:|size:|docs:|rustdoc:|layers:|fidelity: [0-9]|chaos: )/ { $1 = $1; other = other (other ? "; " : "") $0 }
    END {
      if (node) printf "%d tests: %d passed, %d failed, %d skipped", t, p, f, s
      else if (cargo) printf "%d passed, %d failed, %d ignored", p, f, s
      if ((node || cargo) && other) printf "; "
      printf "%s", other
      if (node && t == 0) { print ""; print "NONE RAN"; exit }
      if ((node || cargo) && s > 0 && ENVIRON["CI"] != "") { print ""; print "SKIPPED UNDER CI"; exit }
    }' "$1"
}
suite() {
  local name=$1; shift
  local began=$SECONDS
  printf '\n=== %s: %s\n' "$name" "$*"
  if ! "$@" 2>&1 | tee "$logs/$name.log"; then
    printf '\n*** suite %s FAILED\n' "$name"
    exit 1
  fi
  local closing
  closing=$(counts "$logs/$name.log")
  case "$closing" in
    *"NONE RAN") printf '\n*** suite %s ran no test\n' "$name"; exit 1 ;;
    *"SKIPPED UNDER CI") printf '\n*** suite %s skipped tests under CI: %s\n' "$name" "${closing%%$'\n'*}"; exit 1 ;;
  esac
  summary+=("$(printf '%-18s %4ss  %s' "$name" "$((SECONDS - began))" "${closing:-ok}")")
}

# A test gateway for the browser and Node suites, on a free port.
start_gateway() {
  cargo build -q -p wow-test-gateway
  local out=$logs/gateway.out
  target/debug/wow-test-gateway --listen 127.0.0.1:0 --db "$logs/events.sqlite" \
    --retry-backoff-ms 5 >"$out" 2>"$logs/gateway.err" &
  gateway_pid=$!
  for _ in $(seq 1 100); do
    if grep -q '^listening on ' "$out"; then break; fi
    sleep 0.1
  done
  WOW_GATEWAY_URL=$(sed -n 's/^listening on //p' "$out" | head -1)
  [ -n "$WOW_GATEWAY_URL" ] || { echo "the test gateway did not start"; cat "$logs/gateway.err"; exit 1; }
  export WOW_GATEWAY_URL
}
trap '[ -n "${gateway_pid:-}" ] && kill "$gateway_pid" 2>/dev/null; true' EXIT
# wasm32 test binaries run through scripts/wasm-test-runner.sh (.cargo/config.toml):
# browser binaries in Chromium driven by playwright-core, the rest in Node.

suite fmt            cargo fmt --all --check
# The layers hold: js -> web -> core, never up, and no circle of files.
suite layers         node scripts/check-layers.mjs
suite clippy         cargo clippy --workspace --all-targets --all-features -- -D warnings
suite clippy-wasm    cargo clippy --target wasm32-unknown-unknown --lib -- -D warnings
suite clippy-consumer cargo clippy --target wasm32-unknown-unknown --lib --no-default-features --features consumer -- -D warnings
suite native         cargo test -p wow-command-core -p wow-command-client --all-features
suite gateway        cargo test -p wow-test-gateway
suite package        scripts/build.sh
suite size           node bench/size.mjs --check
suite api            scripts/check-api.sh
# The API reference (every export documented), and the docs' links and citations.
suite docs           scripts/docs.sh
suite docs-links     node --test tests/docs/
suite rustdoc        scripts/rustdoc.sh
start_gateway
suite wasm-chromium  env WASM_BINDGEN_USE_BROWSER=1 \
                     cargo test --target wasm32-unknown-unknown --lib --test web_storage --test storage_adapter --test client_gateway
# The same browser suites in Firefox and WebKit (tests/support/engines.mjs).
suite wasm-firefox   env WASM_BINDGEN_USE_BROWSER=1 WASM_TEST_ENGINE=firefox \
                     cargo test --target wasm32-unknown-unknown --lib --test web_storage --test storage_adapter --test client_gateway
suite wasm-webkit    env WASM_BINDGEN_USE_BROWSER=1 WASM_TEST_ENGINE=webkit \
                     cargo test --target wasm32-unknown-unknown --lib --test web_storage --test storage_adapter --test client_gateway
suite wasm-node      cargo test --target wasm32-unknown-unknown --lib --test storage_adapter --test client_gateway
# The core's own tests compiled to wasm (32-bit): in Node (V8, as Chromium)
# and in the two other engines.
suite wasm-core      cargo test -p wow-command-core --target wasm32-unknown-unknown --lib
suite wasm-core-engines bash -c 'for e in firefox webkit; do WASM_BINDGEN_USE_BROWSER=1 WASM_TEST_ENGINE=$e cargo test -p wow-command-core --target wasm32-unknown-unknown --lib || exit 1; done'
suite node           node --test tests/edge/node.test.mjs tests/edge/adapters.test.mjs tests/edge/first-hour.test.mjs tests/edge/settles.test.mjs tests/edge/trust.test.mjs tests/edge/wow9.test.mjs
suite workerd        node --test tests/edge/workerd.test.mjs
# A line per runtime: Deno (and its KV adapter), Bun, Vercel's edge-runtime.
suite deno           env RUNTIMES=deno node --test tests/edge/runtimes.test.mjs
suite bun            env RUNTIMES=bun node --test tests/edge/runtimes.test.mjs
suite edge-runtime   env RUNTIMES=edge-runtime node --test tests/edge/runtimes.test.mjs
suite bundler        node --test tests/bundler/
# A fresh Vite react-ts app (create-vite's own template, TypeScript 7) with every README code block, in Chromium.
suite vite-app       node --test tests/vite-app/
suite react          node --test tests/react/
# The promise and the trust boundaries in each engine (tests/e2e/engines.test.mjs,
# persistence.test.mjs, trust.test.mjs, wow10.test.mjs, slices.test.mjs),
# a line each; the rest of the end-to-end files in Chromium.
suite e2e            node --test $(ls tests/e2e/*.test.mjs | grep -v -e /engines. -e /persistence. -e /trust. -e /wow10. -e /slices. -e /large-body.)
suite e2e-chromium   env TEST_ENGINES=chromium node --test tests/e2e/engines.test.mjs tests/e2e/persistence.test.mjs tests/e2e/trust.test.mjs tests/e2e/wow10.test.mjs tests/e2e/slices.test.mjs tests/e2e/large-body.test.mjs
suite e2e-firefox    env TEST_ENGINES=firefox node --test tests/e2e/engines.test.mjs tests/e2e/persistence.test.mjs tests/e2e/trust.test.mjs tests/e2e/wow10.test.mjs tests/e2e/slices.test.mjs tests/e2e/large-body.test.mjs
suite e2e-webkit     env TEST_ENGINES=webkit node --test tests/e2e/engines.test.mjs tests/e2e/persistence.test.mjs tests/e2e/trust.test.mjs tests/e2e/wow10.test.mjs tests/e2e/slices.test.mjs tests/e2e/large-body.test.mjs
# What earlier builds stored (tests/fixtures/golden/), read in each engine and
# in Node; and a tab on a pinned older build beside a tab on this one.
suite golden         node --test tests/golden/
suite cross-build    scripts/cross-build.sh
suite generator      node --test tests/generator/ tests/package/
suite fidelity       node tests/gateway/fidelity/run.mjs --examples 5
suite fuzz-boundary  node --test tests/fuzz/
# The chaos set test in each engine: kills, reloads, two tabs, scopes, offline.
for engine in chromium firefox webkit; do
  suite "chaos-$engine" node tests/chaos/chaos.mjs --intents 150 --seed 1 --kills 1 --reloads 1 --engine "$engine"
done

printf '\n=== summary\n'
printf '%s\n' "${summary[@]}"
