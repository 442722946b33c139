//! The pure core: no web-sys, no clock, no I/O. Builds and tests on any target.

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
