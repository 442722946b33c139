//! The pure core of wow-command-client: every decision of a client (the
//! wire protocol, the intent machine, the journal, the engine), with no
//! web-sys, no clock and no I/O. Builds and tests on any target; the
//! binding (`wow-command-client`: the executor and the JS API) is another
//! crate, so nothing here can reach the browser.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
// clippy.toml keeps format! and its kin out of the shipped modules; tests use them.
#![cfg_attr(test, allow(clippy::disallowed_macros))]

pub mod caller_fields;
pub mod connect_input;
pub mod consumer;
pub mod engine;
/// The golden fixtures of every stored kind (intents and effects), read natively.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod golden;
pub mod intent_input;
pub mod journal;
pub mod machine;
pub mod order;
pub mod protocol;
pub mod text;
#[cfg(test)]
mod wire_fields;
