//! A JS exception, captured as `{ name, message }`.

use wasm_bindgen::{JsCast, JsValue};

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
        let field = |key: &str| {
            js_sys::Reflect::get(&value, &JsValue::from_str(key))
                .ok()
                .and_then(|v| v.as_string())
        };
        match value.dyn_ref::<js_sys::Error>() {
            Some(_) => JsFailure {
                name: field("name").unwrap_or_else(|| "Error".into()),
                message: field("message").unwrap_or_default(),
            },
            None => JsFailure {
                name: field("name").unwrap_or_else(|| "Error".into()),
                message: field("message")
                    .or_else(|| value.as_string())
                    .unwrap_or_else(|| format!("{value:?}")),
            },
        }
    }
}

impl ::core::fmt::Display for JsFailure {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}
