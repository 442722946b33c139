#!/usr/bin/env bash
# Builds the npm package of another revision into OUT (for the cross-build
# test, tests/cross-build/): a detached worktree of REV sharing this
# checkout's node_modules, with a target folder of its own that every other
# revision shares (target/other-revs: its compiled dependencies are reused
# from one run to the next). Not this checkout's target/: cargo records a
# package's sources relative to its root, so an artifact built from the
# worktree would look up to date to this checkout's next build, which would
# then ship the other revision's module.
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
mkdir -p "$here/target/other-revs"
ln -sfn "$here/target/venv" "$here/target/other-revs/venv"
ln -s "$here/target/other-revs" "$tree/target"
(cd "$tree" && scripts/build.sh >/dev/null)
rm -rf "$out" && mkdir -p "$(dirname "$out")" && cp -r "$tree/pkg" "$out"
echo "$out: the package of $(git rev-parse --short "$rev")"
