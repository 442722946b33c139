#!/usr/bin/env bash
# Installs what `npm test` and `npm start` need, and only what is missing.
# Idempotent and quick when everything is present; safe to run on every call.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[bootstrap] %s\n' "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }
SUDO=""
if [ "$(id -u)" != 0 ] && have sudo; then SUDO=sudo; fi

# Headless Chromium and its WebDriver, from Debian.
if ! have chromium || ! have chromedriver; then
  say "installing chromium and chromium-driver"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# Firefox and WebKit beside Chromium, from Debian: firefox-esr (driven over
# WebDriver BiDi by puppeteer-core), WebKitGTK's MiniBrowser and its
# WebKitWebDriver (driven by selenium-webdriver), on an Xvfb display.
if ! have firefox-esr || ! have WebKitWebDriver || ! have Xvfb; then
  say "installing firefox-esr, webkit2gtk-driver and xvfb"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq firefox-esr webkit2gtk-driver xvfb >/dev/null
fi

# The pinned toolchain (rust-toolchain.toml), with rustfmt, clippy and the
# wasm target.
pinned=$(sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml)
if ! rustup toolchain list | grep -q "^${pinned}-"; then
  say "installing Rust ${pinned} (rust-toolchain.toml)"
  rustup toolchain install "$pinned" --profile minimal --component rustfmt,clippy \
    --target wasm32-unknown-unknown >/dev/null
fi

# The wasm target.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown >/dev/null
fi

# The pinned nightly that builds the shipped modules, with the std sources.
. scripts/release-toolchain.sh
if ! rustup toolchain list | grep -q "^${RELEASE_TOOLCHAIN}-"; then
  say "installing ${RELEASE_TOOLCHAIN} (builds the shipped .wasm)"
  rustup toolchain install "$RELEASE_TOOLCHAIN" --profile minimal --component rust-src >/dev/null
fi

# wasm-bindgen-cli at exactly the version Cargo.lock holds (the library is pinned with `=`).
if [ ! -f Cargo.lock ]; then cargo generate-lockfile >/dev/null; fi
want=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
got=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$want" != "$got" ]; then
  say "installing wasm-bindgen-cli $want (found: ${got:-none})"
  # Not --locked: one of its locked dependencies is no longer on the registry.
  cargo install wasm-bindgen-cli --version "$want" >/dev/null
fi

if ! have wasm-pack; then
  say "installing wasm-pack"
  cargo install wasm-pack --locked >/dev/null
fi

# npm dev dependencies.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dev dependencies"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi

# What a fresh Vite react-ts app installs (create-vite's template and its
# dependencies, TypeScript 7 among them), pinned: tests/vite-app builds one.
deps=tests/vite-app/deps
if [ ! -d "$deps/node_modules" ] || [ "$deps/package-lock.json" -nt "$deps/node_modules/.package-lock.json" ]; then
  say "installing the Vite app test's dependencies"
  npm ci --prefix "$deps" --no-audit --no-fund --loglevel=error >/dev/null
fi

# Schemathesis (PyPI), pinned, in a virtual environment of the project's own:
# the gateway's fidelity check runs it against Wow's OpenAPI document.
SCHEMATHESIS_VERSION=4.32.5
venv=target/venv
if [ "$("$venv/bin/schemathesis" --version 2>/dev/null | awk '{print $NF}')" != "$SCHEMATHESIS_VERSION" ]; then
  say "installing schemathesis $SCHEMATHESIS_VERSION into $venv"
  if ! have python3 || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 python3-venv >/dev/null
  fi
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >/dev/null
fi
