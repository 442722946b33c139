//! The browser layer: thin wrappers over web APIs that execute what the
//! core decides. One file per web API; JS exceptions are captured as
//! `{ name, message }`.

pub mod driver;
pub mod effects;
pub mod http;
pub mod js_failure;
pub mod locks;
pub mod storage;
pub mod time;

pub use js_failure::JsFailure;

/// A value as a plain JS object (objects, not Maps; integers as numbers).
pub fn to_js(value: &impl serde::Serialize) -> wasm_bindgen::JsValue {
    serde::Serialize::serialize(value, &serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(wasm_bindgen::JsValue::NULL)
}
