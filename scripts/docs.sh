#!/usr/bin/env bash
# `npm run docs`: the API reference, generated from the package's types
# (TypeDoc over pkg/*.d.ts, typedoc.json) into docs/api/. Every export must
# be documented and every link resolve: a warning fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
[ -f pkg/index.d.ts ] || scripts/build.sh >/dev/null
node_modules/.bin/typedoc --logLevel Warn
pages=$(find docs/api -name '*.html' | wc -l)
echo "docs: the API reference in docs/api/ ($pages pages), every export documented"
