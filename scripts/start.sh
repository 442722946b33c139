#!/usr/bin/env bash
# `npm start`: set up, build the npm package into pkg/, and run the gateway
# the SDK is demonstrated against (Ctrl-C stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cat <<'TXT'

The gateway speaks the Wow command protocol; try, in another terminal:
  curl -s -X POST localhost:8080/account/create_account -H 'Content-Type: application/json' \
       -H 'Command-Request-Id: demo-1' -H 'Command-Aggregate-Id: alice' -d '{"name":"alice","balance":100}'
  curl -s -N -X POST localhost:8080/account/alice/lock_amount -H 'Accept: text/event-stream' \
       -H 'Command-Wait-Stage: SNAPSHOT' -H 'Content-Type: application/json' -d '{"amount":5}'
Faults: POST /__gateway/faults {"rules":[{"match":{"aggregateId":"alice"},"fault":"drop_response_after_append","times":1}]}

TXT
exec scripts/gateway.sh
