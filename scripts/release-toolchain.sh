# The toolchain that builds the shipped .wasm modules (sourced by
# scripts/bootstrap.sh and scripts/build.sh): a pinned nightly, because only a
# nightly rebuilds std for the module (`-Z build-std`) with
# `-Cpanic=immediate-abort`, which drops std's panic and formatting machinery
# (-9.9 KB gzip of the client module when it was adopted; docs/benchmarks.md).
# Everything else (lint, native and wasm tests, the gateway) stays on stable.
RELEASE_TOOLCHAIN=nightly-2026-10-30
# Its flags: immediate-abort panics; no caller locations in the module; and
# `{:?}` compiled to nothing (-5.8 KB gzip of the client module): no message
# and no stored text of the crate may rely on Debug (fingerprints write floats
# with their own writer, tested equal to Debug's text natively). `wow_release`
# lets a hot function ask to be built for speed (`optimize(speed)`, nightly).
# Every function may be inlined into another crate's code, std's included
# (`-Zcross-crate-inline-threshold=always`): each is then built where it is
# used, with what it is called with in view, instead of once in its own
# crate and only linked: -3.8 KB gzip of the client module, -2.1 KB of the
# consumer's, measured. It also makes the core's crate of its own
# (crates/core) cost nothing beside the binding's: without it, +1.5 KB.
RELEASE_RUSTFLAGS="--cfg wow_release -Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none -Zfmt-debug=none -Zcross-crate-inline-threshold=always"
# How std is rebuilt for the module: with panic_abort, and std's own
# `optimize_for_size` feature (smaller sort, formatting and collection code
# paths in std itself: -2.0 KB gzip of the client download, measured).
RELEASE_BUILD_STD="-Z build-std=std,panic_abort -Z build-std-features=optimize_for_size"
