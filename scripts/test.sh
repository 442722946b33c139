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
  local began=$SECONDS
  printf '\n=== %s: %s\n' "$name" "$*"
  if ! "$@" 2>&1 | tee "$logs/$name.log"; then
    printf '\n*** suite %s FAILED\n' "$name"
    exit 1
  fi
  local closing
  closing=$(grep -E '^test result:|^# (pass|fail)|[0-9]+ passed, [0-9]+ failed|^pkg/:|^api:|^size:|^fidelity: [0-9]' "$logs/$name.log" \
    | awk '{$1=$1};1' | paste -sd ';' - || true)
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
suite clippy         cargo clippy --workspace --all-targets --all-features -- -D warnings
suite clippy-wasm    cargo clippy --target wasm32-unknown-unknown --lib -- -D warnings
suite clippy-consumer cargo clippy --target wasm32-unknown-unknown --lib --no-default-features --features consumer -- -D warnings
suite native         cargo test -p wow-command-client --all-features
suite gateway        cargo test -p wow-test-gateway
suite package        scripts/build.sh
suite size           node bench/size.mjs --check
suite api            scripts/check-api.sh
start_gateway
suite wasm-chromium  env WASM_BINDGEN_USE_BROWSER=1 \
                     cargo test --target wasm32-unknown-unknown --lib --test web_storage --test storage_adapter --test client_gateway
# The same browser suites in Firefox and WebKit (tests/support/engines.mjs).
suite wasm-firefox   env WASM_BINDGEN_USE_BROWSER=1 WASM_TEST_ENGINE=firefox \
                     cargo test --target wasm32-unknown-unknown --lib --test web_storage --test storage_adapter --test client_gateway
suite wasm-webkit    env WASM_BINDGEN_USE_BROWSER=1 WASM_TEST_ENGINE=webkit \
                     cargo test --target wasm32-unknown-unknown --lib --test web_storage --test storage_adapter --test client_gateway
suite wasm-node      cargo test --target wasm32-unknown-unknown --lib --test storage_adapter --test client_gateway
suite node           node --test tests/edge/node.test.mjs tests/edge/adapters.test.mjs
suite workerd        node --test tests/edge/workerd.test.mjs
# A line per runtime: Deno (and its KV adapter), Bun, Vercel's edge-runtime.
suite deno           node --test --test-name-pattern='^(deno|Deno KV)' tests/edge/runtimes.test.mjs
suite bun            node --test --test-name-pattern='^bun' tests/edge/runtimes.test.mjs
suite edge-runtime   node --test --test-name-pattern='^edge-runtime' tests/edge/runtimes.test.mjs
suite bundler        node --test tests/bundler/
suite react          node --test tests/react/
# The promise in each engine (tests/e2e/engines.test.mjs, persistence.test.mjs),
# a line each; the rest of the end-to-end files in Chromium.
suite e2e            node --test $(ls tests/e2e/*.test.mjs | grep -v -e /engines. -e /persistence.)
suite e2e-chromium   env TEST_ENGINES=chromium node --test tests/e2e/engines.test.mjs tests/e2e/persistence.test.mjs
suite e2e-firefox    env TEST_ENGINES=firefox node --test tests/e2e/engines.test.mjs tests/e2e/persistence.test.mjs
suite e2e-webkit     env TEST_ENGINES=webkit node --test tests/e2e/engines.test.mjs tests/e2e/persistence.test.mjs
suite generator      node --test tests/generator/ tests/package/
suite fidelity       node tests/gateway/fidelity/run.mjs --examples 5
suite fuzz-boundary  node --test tests/fuzz/
suite chaos          node tests/chaos/chaos.mjs --intents 150 --seed 1 --kills 1 --reloads 1

printf '\n=== summary\n'
printf '%s\n' "${summary[@]}"
