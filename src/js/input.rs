//! Reading the caller's options and commands, with clear errors for bad input.

use crate::core::text::text;
use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::JsValue;

#[cfg(feature = "client")]
pub use crate::core::intent_input::{intent, stage, AggregateInput, CommandInput, Defaults};
use crate::core::protocol::JsonValue;

#[cfg(feature = "client")]
/// Retry settings as given.
#[derive(Debug, Default)]
pub struct RetryInput {
    /// Attempts per drive.
    pub max_attempts: Option<u32>,
    /// Backoff base.
    pub base_ms: Option<u64>,
    /// Backoff cap.
    pub max_ms: Option<u64>,
    /// Confirmation queries before escalating.
    pub max_confirms: Option<u32>,
}

#[cfg(feature = "client")]
/// `WowClient.connect` options (functions and adapters are read separately).
#[derive(Debug)]
pub struct ConnectInput {
    /// The gateway's base URL.
    pub base_url: String,
    /// Storage namespace (user / tenant).
    pub namespace: Option<String>,
    /// Caller timeout per attempt.
    pub timeout_ms: Option<u64>,
    /// Default wait stage.
    pub wait_stage: Option<String>,
    /// Server-side wait timeout (`Command-Wait-Timeout`).
    pub wait_timeout_ms: Option<u64>,
    /// Retry settings.
    pub retry: Option<RetryInput>,
    /// Also send `Command-Wait-Timout`.
    pub legacy_wait_timeout: Option<bool>,
    /// `"v7"` (default) or `"v4"`.
    pub request_id: Option<String>,
    /// Settled intents are kept this many days (default 7).
    pub retention_days: Option<f64>,
    /// Resume unresolved intents right after connecting (needs Web Locks).
    pub resume: Option<bool>,
    /// Ask the browser to keep storage under pressure.
    pub persist_storage: Option<bool>,
    /// Send a W3C `traceparent` with each attempt.
    pub trace_context: Option<bool>,
    /// How long `headers`, `confirm` and a storage adapter's operations may take.
    pub callback_timeout_ms: Option<u64>,
    /// The longest command body, as JSON text.
    pub max_body_chars: Option<u64>,
    /// The deepest nesting in a command body.
    pub max_body_depth: Option<u64>,
    /// `"return"`: a call that meets an offline runtime settles at once.
    pub offline_return: bool,
    /// Where intents are kept: a storage name, a caller's adapter, or none (the default).
    pub storage: JsValue,
    /// Headers for each attempt, asked for before it is sent.
    pub headers: Option<js_sys::Function>,
    /// A caller's own source of history, asked before the gateway's.
    pub confirm: Option<js_sys::Function>,
    /// The same, asked about many intents at once.
    pub confirm_batch: Option<js_sys::Function>,
    /// Told once when an intent escalates.
    pub on_escalated: Option<js_sys::Function>,
    /// A caller's check of downstream stages.
    pub check_downstream: Option<js_sys::Function>,
    /// Telemetry events.
    pub on_event: Option<js_sys::Function>,
    /// The history probe's events.
    pub on_history: Option<js_sys::Function>,
}

#[cfg(feature = "client")]
impl ConnectInput {
    /// Reads `WowClient.connect`'s options.
    pub fn read(options: &JsValue) -> Result<ConnectInput, String> {
        let o = CallerFields::of("options", options)?;
        let base_url = o.string("baseUrl");
        if base_url.is_none() {
            o.refuse("options.baseUrl is required".into());
        }
        let read = ConnectInput {
            base_url: base_url.unwrap_or_default(),
            namespace: o.string("namespace"),
            timeout_ms: o.count("timeoutMs"),
            wait_stage: o.string("waitStage"),
            wait_timeout_ms: o.count("waitTimeoutMs"),
            retry: o.object("retry").map(|r| {
                let retry = RetryInput {
                    max_attempts: r.count("maxAttempts").map(clamp_u32),
                    base_ms: r.count("baseMs"),
                    max_ms: r.count("maxMs"),
                    max_confirms: r.count("maxConfirms").map(clamp_u32),
                };
                r.known();
                retry
            }),
            legacy_wait_timeout: o.boolean("legacyWaitTimeout"),
            request_id: o.string("requestId"),
            retention_days: o.number("retentionDays"),
            resume: o.boolean("resume"),
            persist_storage: o.boolean("persistStorage"),
            trace_context: o.boolean("traceContext"),
            callback_timeout_ms: o.count("callbackTimeoutMs"),
            max_body_chars: o.count("maxBodyChars"),
            max_body_depth: o.count("maxBodyDepth"),
            offline_return: match o.string("offline").as_deref() {
                None | Some("wait") => false,
                Some("return") => true,
                Some(_) => {
                    o.refuse("options.offline must be \"wait\" or \"return\"".into());
                    false
                }
            },
            storage: o.value("storage"),
            headers: o.function("headers"),
            confirm: o.function("confirm"),
            confirm_batch: o.function("confirmBatch"),
            on_escalated: o.function("onEscalated"),
            check_downstream: o.function("checkDownstream"),
            on_event: o.function("onEvent"),
            on_history: o.function("onHistory"),
        };
        // Read where the module restarts (src/web/instance.js): checked here.
        let _ = o.function("onRestart");
        o.known();
        o.finish(read)
    }
}

#[cfg(feature = "client")]
fn clamp_u32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(feature = "client")]
impl CommandInput {
    /// Reads a command given to `send`, `sendAndWait` or `sendAndWaitStream`;
    /// its body must fit `limits`.
    pub fn read(command: &JsValue, limits: crate::web::JsonLimits) -> Result<CommandInput, String> {
        let c = CallerFields::of("command", command)?;
        let Some(a) = c.object("aggregate") else {
            c.refuse("command.aggregate is required".into());
            return Err(c.first_error());
        };
        // In the order the fields were always read, so the same one is named.
        let context_alias = a.string("contextAlias");
        let resource = a.string("resource");
        if resource.is_none() {
            a.refuse("command.aggregate.resource is required".into());
        }
        let read = CommandInput {
            aggregate: AggregateInput {
                context_alias,
                resource: resource.unwrap_or_default(),
                id: a.string("id"),
                tenant_id: a.string("tenantId"),
                owner_id: a.string("ownerId"),
            },
            action: c.string("action"),
            method: c.string("method"),
            path: c.string("path"),
            body: c.json("body", limits),
            intent_key: c.string("intentKey"),
            scope: c.string("scope"),
            wait_stage: c.string("waitStage"),
            wait_context: c.string("waitContext"),
            wait_processor: c.string("waitProcessor"),
            wait_function: c.string("waitFunction"),
            wait_tail_stage: c.string("waitTailStage"),
            expected_version: c
                .count("expectedVersion")
                .map(|v| v.min(i64::MAX as u64) as i64),
            timeout_ms: c.count("timeoutMs"),
            wait_timeout_ms: c.count("waitTimeoutMs"),
            headers: c.string_map("headers"),
            create: c.boolean("create"),
            id_in_path: c.boolean("idInPath"),
        };
        a.known();
        c.known();
        c.finish(read)
    }
}

/// Typed reads of a caller's object, one field at a time, with errors that
/// name the field and what it must be (`command.timeoutMs must be a
/// non-negative integer`). `undefined` and `null` are "not given". A bad
/// field is read as not given and its error kept (the first one, shared
/// with nested objects' readers) for [`CallerFields::finish`]: a reader is one
/// straight line with one way out, not a return after every field.
pub struct CallerFields {
    what: String,
    object: JsValue,
    error: Rc<RefCell<Option<String>>>,
    /// Every name a reader asked for: the object's known fields, spelled
    /// once, where they are read ([`CallerFields::known`]).
    asked: RefCell<Vec<String>>,
}

impl CallerFields {
    /// The object at `what`; anything else is refused.
    pub fn of(what: &str, object: &JsValue) -> Result<CallerFields, String> {
        CallerFields::within(what, object, Rc::default())
    }

    fn within(
        what: &str,
        object: &JsValue,
        error: Rc<RefCell<Option<String>>>,
    ) -> Result<CallerFields, String> {
        if object.is_null_or_undefined() {
            return Err(text!(what, " is required"));
        }
        if !object.is_object() || crate::web::safe_read::is_array(object) != Some(false) {
            return Err(text!(what, " must be an object"));
        }
        Ok(CallerFields {
            what: what.to_owned(),
            object: object.clone(),
            error,
            asked: RefCell::default(),
        })
    }

    /// Keeps `error` unless an earlier one is kept.
    pub fn refuse(&self, error: String) {
        self.error.borrow_mut().get_or_insert(error);
    }

    /// `value`, or the first error met reading it.
    pub fn finish<T>(&self, value: T) -> Result<T, String> {
        match self.error.borrow_mut().take() {
            None => Ok(value),
            Some(e) => Err(e),
        }
    }

    /// After every field is read: refuses the first of the object's own
    /// keys that no reader asked for, listing the ones it knows (`timeout`
    /// for `timeoutMs` was silently ignored). A list, not the nearest name:
    /// an edit distance cost 490 B gzip of the module, and a reader finds a
    /// misspelling in a list at a glance.
    #[cfg(feature = "client")]
    pub fn known(&self) {
        let asked = self.asked.borrow();
        let unknown = crate::web::safe_read::keys(&self.object)
            .unwrap_or_default()
            .into_iter()
            .find(|key| !asked.contains(key));
        if let Some(key) = unknown {
            let mut known = String::new();
            for name in asked.iter() {
                known.push_str(if known.is_empty() { "" } else { ", " });
                known.push_str(name);
            }
            self.refuse(text!(
                self.what,
                ".",
                key,
                " is not an option (known: ",
                known,
                ")"
            ));
        }
    }

    /// A function field.
    #[cfg(feature = "client")]
    pub fn function(&self, name: &str) -> Option<js_sys::Function> {
        self.read(name, "a function", |v| crate::web::safe_read::function(&v))
    }

    /// A field of any value, read as it is (a storage adapter, or its name).
    #[cfg(feature = "client")]
    pub fn value(&self, name: &str) -> JsValue {
        self.get(name).unwrap_or(JsValue::UNDEFINED)
    }

    /// The error kept (after a [`CallerFields::refuse`]).
    #[cfg(feature = "client")]
    fn first_error(&self) -> String {
        self.error.borrow_mut().take().unwrap_or_default()
    }

    fn get(&self, name: &str) -> Option<JsValue> {
        self.asked.borrow_mut().push(name.to_owned());
        match js_sys::Reflect::get(&self.object, &JsValue::from_str(name)) {
            Ok(v) if v.is_null_or_undefined() => None,
            Ok(v) => Some(v),
            Err(_) => {
                self.refuse(text!(self.what, ".", name, " could not be read"));
                None
            }
        }
    }

    /// `read` of the field's value; a value it refuses is kept as the error.
    fn read<T>(
        &self,
        name: &str,
        expected: &str,
        read: impl FnOnce(JsValue) -> Option<T>,
    ) -> Option<T> {
        let value = read(self.get(name)?);
        if value.is_none() {
            self.refuse(text!(self.what, ".", name, " must be ", expected));
        }
        value
    }

    /// A string field.
    pub fn string(&self, name: &str) -> Option<String> {
        self.read(name, "a string", |v| v.as_string())
    }

    /// A boolean field.
    pub fn boolean(&self, name: &str) -> Option<bool> {
        self.read(name, "true or false", |v| v.as_bool())
    }

    /// A finite number field.
    pub fn number(&self, name: &str) -> Option<f64> {
        self.read(name, "a finite number", |v| {
            v.as_f64().filter(|n| n.is_finite())
        })
    }

    /// A non-negative integer field (milliseconds, counts, versions).
    pub fn count(&self, name: &str) -> Option<u64> {
        self.read(name, "a non-negative integer", |v| {
            v.as_f64()
                // At most 2^53 - 1: beyond it a number is no longer exact in JS.
                .filter(|n| *n >= 0.0 && *n <= 9_007_199_254_740_991.0 && n.fract() == 0.0)
                .map(|n| n as u64)
        })
    }

    /// A nested object field, read into the same error.
    pub fn object(&self, name: &str) -> Option<CallerFields> {
        let value = self.get(name)?;
        match CallerFields::within(&text!(self.what, ".", name), &value, self.error.clone()) {
            Ok(fields) => Some(fields),
            Err(e) => {
                self.refuse(e);
                None
            }
        }
    }

    /// A free-form JSON field (a command body), within `limits`.
    pub fn json(&self, name: &str, limits: crate::web::JsonLimits) -> Option<JsonValue> {
        match crate::web::caller_json(&self.get(name)?, &text!(self.what, ".", name), limits) {
            Ok(json) => Some(json),
            Err(e) => {
                self.refuse(e);
                None
            }
        }
    }

    /// An object of string values (extra headers).
    pub fn string_map(&self, name: &str) -> Option<Vec<(String, String)>> {
        let map = self.object(name)?;
        let Some(keys) = crate::web::safe_read::keys(&map.object) else {
            self.refuse(text!(self.what, ".", name, " could not be read"));
            return None;
        };
        Some(
            keys.into_iter()
                .filter_map(|key| Some((key.clone(), map.string(&key)?)))
                .collect(),
        )
    }
}

/// A function-valued option, if present.
pub fn function(options: &JsValue, name: &str) -> Result<Option<js_sys::Function>, String> {
    let value = js_sys::Reflect::get(options, &name.into()).unwrap_or(JsValue::UNDEFINED);
    if value.is_null_or_undefined() {
        return Ok(None);
    }
    crate::web::safe_read::function(&value)
        .map(Some)
        .ok_or_else(|| text!("option `", name, "` must be a function"))
}
