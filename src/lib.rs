//! # wow-command-client
//!
//! Send commands to a [Wow](https://github.com/Ahoo-Wang/Wow) command gateway
//! without ever losing or duplicating a business intent.
//!
//! The crate is layered, top to bottom:
//!
//! - `js` — the wasm-bindgen surface used from JavaScript (wasm32 only);
//! - `web` — the thin browser driver: fetch, storage, locks (wasm32 only);
//! - [`core`] — pure Rust with no web dependencies, built and tested natively:
//!   [`core::protocol`] (wire types, headers, routes, SSE decoder, confirm
//!   queries), then the journal and the sans-IO state machine.
//!
//! The core never reads a clock and never does I/O, so everything that
//! decides an outcome can be tested deterministically.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
// clippy.toml keeps format! and its kin out of the shipped modules; tests use them.
#![cfg_attr(test, allow(clippy::disallowed_macros))]

/// The module's allocator: talc, each growth of linear memory claimed as a
/// heap of its own (Cargo.toml says why this one, and why claimed).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::cell::TalcSyncCell<talc::wasm::WasmGrowAndClaim, talc::wasm::WasmBinning> =
    talc::cell::TalcSyncCell::new_wasm(talc::wasm::WasmGrowAndClaim);

#[cfg(all(test, target_arch = "wasm32"))]
mod allocator_tests;
/// The pure core (its own crate, `crates/core`: it cannot reach the
/// browser), under the name the layers above use.
pub use wow_command_core as core;
#[cfg(target_arch = "wasm32")]
pub mod js;
#[cfg(target_arch = "wasm32")]
pub mod web;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
