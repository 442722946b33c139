//! The JavaScript API (wasm-bindgen): `WowClient`, `CommandError` and the
//! result stream. Failures are thrown as `CommandError` carrying the whole
//! CommandResult and the outcome; nobody parses error text.

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "consumer")]
mod consumer;
pub mod input;
mod types;

use std::future::Future;
use std::pin::Pin;

use wasm_bindgen::JsValue;

/// A call's future, boxed: every exported async method and background task
/// goes through [`promise`] or [`spawn`], so the module holds one
/// instantiation of the futures machinery instead of one per method.
type Call = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/web/runtime.js")]
extern "C" {
    fn hold(promise: &js_sys::Promise) -> js_sys::Promise;
}

/// The promise an exported async method returns: while it is pending it
/// keeps a server process alive (`hold` in `runtime.js`), whatever its
/// future waits on inside.
pub(crate) fn promise(
    call: impl Future<Output = Result<JsValue, JsValue>> + 'static,
) -> js_sys::Promise {
    let call: Call = Box::pin(call);
    hold(&wasm_bindgen_futures::future_to_promise(call))
}

/// Runs `task` in the background (its result is the task's own business).
#[cfg(feature = "client")]
pub(crate) fn spawn(task: impl Future<Output = ()> + 'static) {
    let task: Pin<Box<dyn Future<Output = ()>>> = Box::pin(task);
    wasm_bindgen_futures::spawn_local(task)
}

#[cfg(feature = "client")]
pub use client::WowClient;
