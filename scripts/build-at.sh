#!/usr/bin/env bash
# Builds the npm package of another revision into OUT (for the cross-build
# test, tests/cross-build/): a detached worktree of REV sharing this
# checkout's node_modules and target/ (its compiled dependencies are reused).
#   scripts/build-at.sh REV OUT
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$1 out=$2
here=$(pwd)
tree=$(mktemp -d)/tree
git worktree add --detach "$tree" "$rev" >/dev/null
trap 'git -C "$here" worktree remove --force "$tree"' EXIT
ln -s "$here/node_modules" "$tree/node_modules"
# Its lock is older than what is installed: bootstrap must not reinstall.
touch -d '2000-01-01' "$tree/package-lock.json"
ln -s "$here/target" "$tree/target"
(cd "$tree" && scripts/build.sh >/dev/null)
rm -rf "$out" && cp -r "$tree/pkg" "$out"
echo "$out: the package of $(git rev-parse --short "$rev")"
