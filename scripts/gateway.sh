#!/usr/bin/env bash
# `npm run gateway [-- ARGS]`: the test gateway on a fixed default port.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wow-test-gateway
mkdir -p target/gateway
exec target/release/wow-test-gateway --listen "${GATEWAY_LISTEN:-127.0.0.1:8080}" \
  --db "${GATEWAY_DB:-target/gateway/events.sqlite}" "$@"
