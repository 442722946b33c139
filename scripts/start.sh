#!/usr/bin/env bash
# `npm start`: set up, build the package, and serve the demo page with the
# test gateway on one origin (Ctrl-C stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
listen=${GATEWAY_LISTEN:-127.0.0.1:8080}
echo
echo "Demo: http://${listen}/   (Ctrl-C to stop)"
echo
exec scripts/gateway.sh --www www --pkg pkg
