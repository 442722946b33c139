//! The pure core: no web-sys, no clock, no I/O. Builds and tests on any target.

pub mod caller_fields;
pub mod connect_input;
pub mod consumer;
pub mod engine;
pub mod intent_input;
pub mod journal;
pub mod machine;
pub mod order;
pub mod protocol;
pub mod text;
#[cfg(test)]
mod wire_fields;
