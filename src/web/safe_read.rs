//! Reads of caller-supplied values that cannot throw: a Proxy's traps, a
//! revoked Proxy and a throwing getter make `Array.isArray`, `Object.keys`
//! and `instanceof` throw, and an exception thrown into a running future
//! would escape as uncaught and leave its call pending. Each read here
//! answers `None` instead, and the caller reports the value as unreadable.

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

#[wasm_bindgen(module = "/src/web/runtime.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = own)]
    fn own_or_throw(value: &JsValue, key: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = stringList)]
    fn string_list_or_throw(value: &JsValue) -> Result<Option<String>, JsValue>;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array_or_throw(value: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    fn keys_or_throw(value: &JsValue) -> Result<js_sys::Array, JsValue>;
}

/// Whether `value` is an array (`None`: it cannot be told).
pub fn is_array(value: &JsValue) -> Option<bool> {
    is_array_or_throw(value).ok()
}

/// `value[key]` when `value` holds it, itself or by its class, never by a
/// built-in prototype (`undefined` then: a polluted `Object.prototype` is
/// not the caller's); `None`: the read threw.
pub fn get(value: &JsValue, key: &str) -> Option<JsValue> {
    own_or_throw(value, key).ok()
}

/// An array of strings, joined by line breaks (`None`: anything else, or unreadable).
pub fn string_list(value: &JsValue) -> Option<String> {
    string_list_or_throw(value).ok().flatten()
}

/// The own enumerable string keys of an object (`None`: they cannot be listed).
pub fn keys(value: &JsValue) -> Option<Vec<String>> {
    let keys = keys_or_throw(value).ok()?;
    Some(keys.iter().filter_map(|k| k.as_string()).collect())
}

/// The elements of an array (`None`: not an array, or unreadable).
pub fn elements(value: &JsValue) -> Option<Vec<JsValue>> {
    if is_array(value)? {
        let length = get(value, "length")?.as_f64()? as u32;
        (0..length)
            .map(|i| js_sys::Reflect::get_u32(value, i).ok())
            .collect()
    } else {
        None
    }
}

/// `value` as a function, by `typeof` (which never throws).
pub fn function(value: &JsValue) -> Option<js_sys::Function> {
    value.is_function().then(|| value.clone().unchecked_into())
}
