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
pub fn to_js(value: &impl serde::Serialize) -> wasm_bindgen::JsValue {
    serde::Serialize::serialize(value, &serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(wasm_bindgen::JsValue::NULL)
}
