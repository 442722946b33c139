//! A JS exception, captured as `{ name, message }`.

use wasm_bindgen::JsValue;

/// What a JS exception said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsFailure {
    /// `error.name`, e.g. `QuotaExceededError`.
    pub name: String,
    /// `error.message`.
    pub message: String,
}

impl From<JsValue> for JsFailure {
    fn from(value: JsValue) -> JsFailure {
        // Whatever was thrown: an Error, a string, or a hostile object
        // whose every read throws (read through `safe_read`, never `instanceof`).
        let field = |key: &str| {
            if value.is_object() || value.is_function() {
                super::safe_read::get(&value, key).and_then(|v| v.as_string())
            } else {
                None
            }
        };
        let message = field("message").or_else(|| value.as_string());
        JsFailure {
            name: field("name").unwrap_or_else(|| "Error".into()),
            message: message.unwrap_or_else(|| {
                let kind = if value.is_object() {
                    "an object that is not an Error"
                } else if value.is_undefined() {
                    "undefined"
                } else {
                    "a value that is not an Error"
                };
                kind.to_owned()
            }),
        }
    }
}

impl JsFailure {
    /// `name: message`, built without `core::fmt` (what `Display` writes).
    pub fn text(&self) -> String {
        crate::core::text::text!(self.name, ": ", self.message)
    }
}

impl ::core::fmt::Display for JsFailure {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(&self.text())
    }
}
