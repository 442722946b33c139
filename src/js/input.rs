//! Reading the caller's options and commands: the core's readers
//! (`CallerFields`, `ConnectInput` and `CommandInput`, in the core's crate)
//! decide; this answers what each of the caller's values is, without
//! throwing.

use wasm_bindgen::JsValue;

#[cfg(feature = "client")]
pub use crate::core::caller_fields::CallerFields;
use crate::core::caller_fields::Given;
#[cfg(feature = "client")]
pub use crate::core::connect_input::{ConnectInput, Settings};
#[cfg(feature = "client")]
pub use crate::core::intent_input::{header_mistake, intent, CommandInput, Defaults};
use crate::core::text::text;

/// A value the caller gave, as the core's readers see it (the core is a
/// crate of its own, so its trait is met by this crate's own type).
#[derive(Clone, Debug)]
#[repr(transparent)]
pub struct Caller(pub JsValue);

impl std::ops::Deref for Caller {
    type Target = JsValue;
    fn deref(&self) -> &JsValue {
        &self.0
    }
}

impl Given for Caller {
    type Function = js_sys::Function;
    fn nothing() -> Caller {
        Caller(JsValue::UNDEFINED)
    }
    fn is_nothing(&self) -> bool {
        self.is_null_or_undefined()
    }
    fn is_undefined(&self) -> bool {
        self.0.is_undefined()
    }
    fn is_record(&self) -> bool {
        self.is_object() && crate::web::safe_read::is_array(self) == Some(false)
    }
    fn field(&self, name: &str) -> Option<Caller> {
        crate::web::safe_read::get(self, name).map(Caller)
    }
    fn keys(&self) -> Option<Vec<String>> {
        crate::web::safe_read::keys(self)
    }
    fn string(&self) -> Option<String> {
        self.as_string()
    }
    fn number(&self) -> Option<f64> {
        self.as_f64()
    }
    fn boolean(&self) -> Option<bool> {
        self.as_bool()
    }
    fn function(self) -> Option<js_sys::Function> {
        crate::web::safe_read::function(&self.0)
    }
    fn strings(&self) -> Option<String> {
        // Joined in JS: one string crosses.
        crate::web::safe_read::string_list(self)
    }
}

/// A command given to `send`, `sendAndWait` or `sendAndWaitStream`; its
/// body must fit `limits`.
#[cfg(feature = "client")]
pub fn command(command: &JsValue, limits: crate::web::JsonLimits) -> Result<CommandInput, String> {
    CommandInput::read(Caller(command.clone()), |body, what| {
        crate::web::caller_body(&body.0, what, limits)
    })
}

/// A function-valued option, if present.
pub fn function(options: &JsValue, name: &str) -> Result<Option<js_sys::Function>, String> {
    let value = crate::web::safe_read::get(options, name).unwrap_or(JsValue::UNDEFINED);
    if value.is_null_or_undefined() {
        return Ok(None);
    }
    crate::web::safe_read::function(&value)
        .map(Some)
        .ok_or_else(|| text!("option `", name, "` must be a function"))
}
