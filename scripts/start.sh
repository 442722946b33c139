#!/usr/bin/env bash
# `npm start`: set up, build the package and the test gateway, serve the demo
# page with the gateway on one origin, and print its address only once the
# page is actually being served (Ctrl-C stops it).
#   GATEWAY_LISTEN=host:port (default 127.0.0.1:8080), GATEWAY_DB=path,
#   GATEWAY_PROFILE=release|debug (default release), START_SKIP_BUILD=1 (pkg/ is built)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${START_SKIP_BUILD:-}" ]; then scripts/build.sh; fi
profile=${GATEWAY_PROFILE:-release}
if [ "$profile" = release ]; then
  cargo build --release -q -p wow-test-gateway
else
  cargo build -q -p wow-test-gateway
fi
listen=${GATEWAY_LISTEN:-127.0.0.1:8080}
mkdir -p target/gateway
"target/$profile/wow-test-gateway" --listen "$listen" --db "${GATEWAY_DB:-target/gateway/events.sqlite}" \
  --www www --pkg pkg &
gateway=$!
trap 'kill "$gateway" 2>/dev/null || true' EXIT INT TERM
# The page and the package's entry both answer 200 before the address is printed.
if ! node -e '
  const base = process.argv[1];
  const until = Date.now() + 60000;
  (async () => {
    for (;;) {
      try {
        const [page, entry] = await Promise.all([fetch(base + "/"), fetch(base + "/pkg/index.js")]);
        if (page.ok && entry.ok) process.exit(0);
      } catch {}
      if (Date.now() > until) process.exit(1);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();' "http://${listen}"; then
  echo "the demo was not served at http://${listen}/ within 60 s" >&2
  exit 1
fi
echo
echo "Demo: http://${listen}/   (Ctrl-C to stop)"
echo
wait "$gateway"
