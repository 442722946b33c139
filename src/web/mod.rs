//! The browser layer: thin wrappers over web APIs that execute what the
//! core decides. One file per web API; JS exceptions are captured as
//! `{ name, message }`.

#[cfg(feature = "client")]
pub mod driver;
#[cfg(feature = "consumer")]
pub mod effects;
#[cfg(feature = "client")]
pub mod http;
pub mod js_failure;
pub mod locks;
pub mod random;
pub mod storage;
pub mod time;

pub use js_failure::JsFailure;

use crate::core::protocol::{JsonValue, ToJson};

/// Calls a caller's JS function with `this` and `args` and awaits what it
/// returns, a value or a promise: a synchronous throw and a rejection both
/// come back as the `Err`.
pub async fn call_and_await(
    f: &js_sys::Function,
    this: &wasm_bindgen::JsValue,
    args: &[&wasm_bindgen::JsValue],
) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
    let array: js_sys::Array = args.iter().copied().collect();
    let returned = f.apply(this, &array)?;
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&returned)).await
}

/// A value as a plain JS object (objects, not Maps; integers as numbers).
///
/// Every typed value crosses as a [`JsonValue`], written by the core's
/// hand-written codec, so serde-wasm-bindgen is instantiated for `JsonValue`
/// alone and no serde derive is instantiated at all.
pub fn to_js(value: &(impl ToJson + ?Sized)) -> wasm_bindgen::JsValue {
    json_to_js(&value.to_json())
}

/// Free-form JSON as a plain JS value, through serde-wasm-bindgen.
pub fn json_to_js(value: &JsonValue) -> wasm_bindgen::JsValue {
    serde::Serialize::serialize(value, &serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(wasm_bindgen::JsValue::NULL)
}

/// A JS value as free-form JSON, through serde-wasm-bindgen; what JSON
/// cannot carry (functions, symbols) is an error naming nothing of the value.
pub fn json_from_js(value: wasm_bindgen::JsValue) -> Result<JsonValue, JsFailure> {
    serde_wasm_bindgen::from_value(value).map_err(|_| JsFailure {
        name: "TypeError".into(),
        message: "not a JSON value".into(),
    })
}
