//! The JavaScript API (wasm-bindgen): `WowClient`, `CommandError` and the
//! result stream. Failures are thrown as `CommandError` carrying the whole
//! CommandResult and the outcome; nobody parses error text.

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "consumer")]
mod consumer;
pub mod input;
mod types;

#[cfg(feature = "client")]
pub use client::WowClient;
