//! The JavaScript API (wasm-bindgen): `WowClient`, `CommandError` and the
//! result stream. Failures are thrown as `CommandError` carrying the whole
//! CommandResult and the outcome; nobody parses error text.

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "consumer")]
mod consumer;
pub mod input;
mod types;
// Written from the core's field lists by its `wire_fields` test.
mod wire_types;

#[cfg(feature = "consumer")]
use std::future::Future;

#[cfg(feature = "consumer")]
#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/web/runtime.js")]
extern "C" {
    fn hold(promise: &js_sys::Promise) -> js_sys::Promise;
}

/// The promise an exported async method of the consumer returns: while it
/// is pending it keeps a server process alive (`hold` in `runtime.js`),
/// whatever its future waits on inside. One boxed future type for all.
#[cfg(feature = "consumer")]
pub(crate) fn promise(
    call: impl Future<Output = Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>> + 'static,
) -> js_sys::Promise {
    let call: std::pin::Pin<
        Box<dyn Future<Output = Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>>>,
    > = Box::pin(call);
    hold(&wasm_bindgen_futures::future_to_promise(call))
}

#[cfg(feature = "client")]
pub use client::WowClient;
