//! What storage hands back, read: a JS exception as the way storage is
//! unavailable, and a stored value (an object, or the text a string store
//! keeps) as a record through its schema check. Beneath the stores and
//! their callers alike.

use wasm_bindgen::JsValue;

use crate::core::journal::{RecordError, StoreError, StoredRecord, Unavailable};
use crate::web::{json_from_js, JsFailure};

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `JSON.parse` of a string the engine holds.
    #[wasm_bindgen(js_namespace = JSON, catch)]
    fn parse(text: &JsValue) -> Result<JsValue, JsValue>;
}

/// Maps a JS exception to the way storage is unavailable.
pub fn unavailable(failure: JsFailure, writing: bool) -> StoreError {
    StoreError::Unavailable {
        kind: Unavailable::of(&failure.name, writing),
        detail: failure.text(),
    }
}

/// A record from a stored JS value, through the schema check.
pub fn record_from_js<R: StoredRecord>(value: JsValue) -> Result<R, RecordError> {
    if !value.is_object() {
        return Err(RecordError::Corrupt("not an object".into()));
    }
    let version = js_sys::Reflect::get(&value, &JsValue::from_str("schemaVersion"))
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|v| v.fract() == 0.0 && *v >= 0.0)
        .map(|v| v as u64);
    if version.is_none() {
        // An entry moved aside says why.
        if let Some(why) =
            crate::web::safe_read::get(&value, "quarantinedFor").and_then(|w| w.as_string())
        {
            return Err(RecordError::Corrupt(why));
        }
    }
    R::check_schema(version)?;
    let json = json_from_js(value).map_err(|e| RecordError::Corrupt(e.text()))?;
    R::from_json(json).map_err(|e| RecordError::Corrupt(e.message()))
}

/// A record from what a store returned: JSON text, or the object it keeps.
pub fn record_from_stored<R: StoredRecord>(value: JsValue) -> Result<R, RecordError> {
    // The text is parsed where it is, not copied into the module and back.
    let value = if value.is_string() {
        parse(&value).map_err(|e| RecordError::Corrupt(JsFailure::from(e).text()))?
    } else {
        value
    };
    record_from_js(value)
}
