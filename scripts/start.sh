#!/usr/bin/env bash
# `npm start`: set up, build the package and the test gateway, serve the demo
# page with the gateway on one origin, and print its address only once the
# page is actually being served (Ctrl-C stops it).
#   GATEWAY_LISTEN=host:port (default 127.0.0.1:8080, or a free port when
#   8080 is taken; a port named here that is taken is an error), GATEWAY_DB=path,
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
mkdir -p target/gateway
run=$(mktemp -d)
gateway=""
trap 'if [ -n "$gateway" ]; then kill "$gateway" 2>/dev/null || true; fi; rm -rf "$run"' EXIT INT TERM

# Starts the gateway on $1; true once it listens (its first line on stdout
# says where), false as soon as it has exited instead (a taken port).
launch() {
  : >"$run/out"
  "target/$profile/wow-test-gateway" --listen "$1" --db "${GATEWAY_DB:-target/gateway/events.sqlite}" \
    --www www --pkg pkg >"$run/out" 2>"$run/err" &
  gateway=$!
  until grep -q '^listening on ' "$run/out"; do
    if ! kill -0 "$gateway" 2>/dev/null; then gateway=""; return 1; fi
    sleep 0.05
  done
}

if [ -n "${GATEWAY_LISTEN:-}" ]; then
  if ! launch "$GATEWAY_LISTEN"; then
    echo "npm start: the demo cannot be served at $GATEWAY_LISTEN: $(cat "$run/err")" >&2
    echo "  another process holds that port (\`npm run gateway\` uses 127.0.0.1:8080 too)." >&2
    echo "  Free it, or pick another: GATEWAY_LISTEN=127.0.0.1:8081 npm start (127.0.0.1:0: any free port)." >&2
    exit 1
  fi
elif ! launch 127.0.0.1:8080; then
  echo "npm start: 127.0.0.1:8080 is taken ($(cat "$run/err")); serving on a free port instead." >&2
  if ! launch 127.0.0.1:0; then
    echo "npm start: the test gateway did not start: $(cat "$run/err")" >&2
    exit 1
  fi
fi
# The gateway's own messages from here on, as it writes them.
tail -n +1 -f --pid="$gateway" "$run/err" >&2 &
address=$(sed -n 's/^listening on //p' "$run/out" | head -1)

# The page and the package's entry both answer 200 before the address is printed.
if ! node -e '
  const [base, pid] = [process.argv[1], Number(process.argv[2])];
  const until = Date.now() + 60000;
  const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
  (async () => {
    for (;;) {
      try {
        const [page, entry] = await Promise.all([fetch(base + "/"), fetch(base + "/pkg/index.js")]);
        if (page.ok && entry.ok) process.exit(0);
      } catch {}
      if (Date.now() > until || !alive()) process.exit(1);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();' "$address" "$gateway"; then
  echo "npm start: the demo was not served at $address/ (the gateway's messages are above)" >&2
  exit 1
fi
echo
echo "Demo: $address/   (Ctrl-C to stop)"
echo
wait "$gateway"
