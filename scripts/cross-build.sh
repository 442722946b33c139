#!/usr/bin/env bash
# The cross-build test (tests/cross-build/) against a fixed older build: the
# package of the revision tests/cross-build/older-rev names, rebuilt from this
# repository once per machine into target/builds/ (scripts/build-at.sh), then
# a tab on it and a tab on this build (pkg/) share one journal in Chromium.
# Moving the pin to a newer revision is a decision of its own: the older the
# build, the wider the span of versions the test holds together.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(grep -v '^#' tests/cross-build/older-rev | head -1)
out=target/builds/$rev
if [ ! -f "$out/index.js" ]; then
  echo "building the older package ($rev) into $out"
  scripts/build-at.sh "$rev" "$out" >/dev/null
fi
OLD_PKG=$out exec node --test tests/cross-build/
