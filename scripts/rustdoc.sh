#!/usr/bin/env bash
# The Rust API documentation builds with every link resolving and no
# public doc pointing at a private item (a warning fails it): the core's
# crate, and the binding's for each module it is built as (the client's
# and the consumer's, wasm32).
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTDOCFLAGS="-D warnings"
cargo doc -q --no-deps -p wow-command-core
cargo doc -q --no-deps -p wow-command-client --target wasm32-unknown-unknown
cargo doc -q --no-deps -p wow-command-client --target wasm32-unknown-unknown --no-default-features --features consumer
echo "rustdoc: the core's and the binding's (client, consumer) docs, every link resolved"
