//! The browser layer: thin wrappers over web APIs that execute what the
//! core decides. One file per web API; JS exceptions are captured as
//! `{ name, message }`.

#[cfg(feature = "client")]
pub mod channel;
#[cfg(feature = "consumer")]
pub mod effects;
#[cfg(feature = "client")]
pub mod executor;
pub mod js_failure;
pub mod locks;
pub mod random;
pub mod safe_read;
pub mod storage;
#[cfg(all(test, target_arch = "wasm32", feature = "client"))]
mod text_stream_tests;
pub mod time;

pub use js_failure::JsFailure;

use crate::core::protocol::{JsonOut, JsonValue, ToJson, MAX_NESTING};

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/web/runtime.js")]
extern "C" {
    #[wasm_bindgen(js_name = asJson, catch)]
    fn as_json(
        value: &wasm_bindgen::JsValue,
        what: &str,
        max_chars: u32,
    ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>;
    /// Throws the error of a plain value nested deeper than `max_depth`.
    #[wasm_bindgen(js_name = tooDeep, catch)]
    fn too_deep(
        value: &wasm_bindgen::JsValue,
        what: &str,
        max_depth: u32,
    ) -> Result<(), wasm_bindgen::JsValue>;
    #[wasm_bindgen(js_name = callWithin)]
    fn call_within(
        f: &js_sys::Function,
        this: &wasm_bindgen::JsValue,
        args: &js_sys::Array,
        ms: u32,
        what: &str,
    ) -> js_sys::Promise;
}

/// Calls a caller's JS function with `this` and `args` and awaits what it
/// returns, a value or a promise: a synchronous throw, a rejection, and no
/// answer within `within_ms` (0: no bound) all come back as the `Err`, the
/// last as a `TimeoutError` naming `what`. A caller's callback that never
/// settles must not hold a call forever (DESIGN rule 9).
pub async fn call_and_await(
    f: &js_sys::Function,
    this: &wasm_bindgen::JsValue,
    args: &[&wasm_bindgen::JsValue],
    within_ms: u32,
    what: &str,
) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
    let array: js_sys::Array = args.iter().copied().collect();
    wasm_bindgen_futures::JsFuture::from(call_within(f, this, &array, within_ms, what)).await
}

/// How long a caller's callback (headers, confirm, a storage adapter's
/// operation, reconcile) may take by default before the call it serves
/// treats it as failed.
pub use crate::core::connect_input::DEFAULT_CALLBACK_TIMEOUT_MS;

/// A value as a plain JS object (objects, not Maps; integers as numbers):
/// its JSON text, written straight from the value by the core's codec and
/// parsed by the engine. One string crosses instead of one per key and
/// string value, and what the engine builds is what `JSON.parse` builds (a
/// `"__proto__"` key is a key). Integers beyond 2^53 (a hostile answer's
/// version) have no exact JS number: they become the nearest one.
pub fn to_js(value: &(impl ToJson + ?Sized)) -> wasm_bindgen::JsValue {
    js_sys::JSON::parse(&to_text(value)).unwrap_or(wasm_bindgen::JsValue::NULL)
}

/// A value as JSON text, for what crosses as one string (records in string
/// stores, request bodies): [`to_js`]'s text twin. Numbers that are not
/// integers get the engine's text (`Number.prototype.toString`, what
/// `JSON.stringify` writes), so the module carries no float printing.
pub fn to_text(value: &(impl ToJson + ?Sized)) -> String {
    JsonOut::of(value, engine_number_text)
}

/// A non-integral number as the engine writes it (`Number.prototype.toString`).
pub fn engine_number_text(f: f64, out: &mut String) {
    out.push_str(&String::from(
        js_sys::Number::from(f)
            .to_string_with_radix(10)
            .unwrap_or_else(|_| js_sys::JsString::from("null")),
    ));
}

#[cfg(feature = "client")]
#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/web/engine_text.js")]
extern "C" {
    /// A fingerprint's text of a number that is not an integer.
    #[wasm_bindgen(js_name = floatText)]
    fn engine_float_text(f: f64) -> String;
    /// An epoch time in milliseconds, `toISOString`'s text.
    #[wasm_bindgen(js_name = isoTime)]
    fn engine_iso_time(ms: f64) -> String;
    /// Numbers' texts, joined by commas, as the engine reads them.
    fn numbers(texts: &str) -> Vec<f64>;
}

#[cfg(feature = "client")]
#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/web/runtime.js")]
extern "C" {
    /// `asJson`'s text, not parsed.
    #[wasm_bindgen(js_name = asJson, catch)]
    fn json_text(
        value: &wasm_bindgen::JsValue,
        what: &str,
        max_chars: u32,
        as_text: bool,
    ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>;
}

/// A body at least this long (bytes of JSON text) is sent from the task
/// after the caller's: the caller's task copies and reads it, the next
/// fingerprints and records it, so neither holds the page for the whole
/// (a 900 KB body's was one task of about 50 ms). Its text stays the
/// caller's string (`caller_body`).
pub const LARGE_BODY: usize = 128 * 1024;

/// A caller's command body as [`caller_json`] reads it, read from the text
/// `JSON.stringify` makes of it: one string crosses into the module, not
/// one per key, string and number (a 900 KB body's long task), and that
/// text is the body's own, sent and stored as it is. The numbers that are
/// not small integers cross back once, all together; the fingerprint's
/// text of each is placed from its digits where that is exact.
#[cfg(feature = "client")]
pub fn caller_body(
    value: &wasm_bindgen::JsValue,
    what: &str,
    limits: JsonLimits,
) -> Result<crate::core::journal::Body, String> {
    use crate::core::protocol::json_text::{fingerprint_float_text, read_json_text, TextError};
    let held =
        json_text(value, what, limits.max_chars, true).map_err(|e| JsFailure::from(e).message)?;
    let text = held.as_string().unwrap_or_default();
    let read = match read_json_text(&text, limits.max_depth) {
        Ok(read) => read,
        Err(e) => {
            // Only a nesting beyond the limit fails to read what
            // `JSON.stringify` wrote; its message measures the value.
            let clean = js_sys::JSON::parse(&text).unwrap_or(wasm_bindgen::JsValue::NULL);
            let deep = too_deep(&clean, what, limits.max_depth).err();
            return Err(match (e, deep) {
                (TextError::TooDeep, Some(e)) => JsFailure::from(e).message,
                _ => crate::core::text::text!(what, " cannot be sent as JSON"),
            });
        }
    };
    let mut joined = String::new();
    for text in &read.numbers {
        if !joined.is_empty() {
            joined.push(',');
        }
        joined.push_str(text);
    }
    let values = if joined.is_empty() {
        Vec::new()
    } else {
        numbers(&joined)
    };
    let mut floats = Vec::new();
    for (text, f) in read.numbers.iter().zip(&values) {
        if let Some(placed) = fingerprint_float_text(text) {
            floats.push((f.to_bits(), placed));
        }
    }
    let as_written = read.as_written;
    let value = read.fill(&values);
    // Its own text at once either way: what it weighs (a large body starts
    // later) and a fingerprint's room are read from it.
    let own = if as_written { text } else { to_text(&value) };
    // A large body's own text stays the caller's string, which requests
    // and writes hand back: the text never crosses out of the module again.
    let held =
        (as_written && own.len() >= LARGE_BODY).then(|| Box::new(held) as Box<dyn std::any::Any>);
    Ok(crate::core::journal::Body::from_caller(
        value, own, floats, held,
    ))
}

/// [`crate::core::protocol::float_text`]'s text for a fingerprint's
/// non-integral number, placed by `floatText` (engine_text.js) from the
/// engine's shortest digits, so the module carries no float printing.
#[cfg(feature = "client")]
pub fn float_text(f: f64, out: &mut String) {
    out.push_str(&engine_float_text(f));
}

/// [`crate::core::machine::probe::iso8601`]'s text of a time a message
/// names, written by the engine's `Date`, so the module carries no date
/// writing.
#[cfg(feature = "client")]
pub fn iso_time(ms: i64) -> String {
    engine_iso_time(ms as f64)
}

/// A value with fixed keys (a question to a caller's callback) as a plain
/// object, built by serde-wasm-bindgen. Only for keys the crate chose: its
/// objects are filled by assignment, so a free-form `"__proto__"` key would
/// set the prototype; free-form JSON crosses as text ([`to_js`]).
/// Integers cross as JS numbers (the nearest one beyond 2^53, as everywhere
/// else), so serde-wasm-bindgen's own 64-bit integer writers, whose error
/// text for those was the last thing that linked `core::fmt` into the
/// module, are not instantiated.
pub fn typed_to_js(value: &JsonValue) -> wasm_bindgen::JsValue {
    use serde::Serialize;
    crate::core::protocol::json_value::JsNumbers(value)
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(wasm_bindgen::JsValue::NULL)
}

pub use crate::core::protocol::JsonLimits;

/// A caller's value as the JSON it will be sent as, within `limits`; what
/// JSON cannot carry (a cycle, a BigInt, a getter that throws) or what is
/// beyond a limit is an error in the caller's terms, naming `what`.
pub fn caller_json(
    value: &wasm_bindgen::JsValue,
    what: &str,
    limits: JsonLimits,
) -> Result<JsonValue, String> {
    let clean = as_json(value, what, limits.max_chars)
        // A plain value fails the walk only by its nesting.
        .and_then(|clean| match walk(&clean, 0, limits.max_depth) {
            Some(json) => Ok(json),
            None => too_deep(&clean, what, limits.max_depth).map(|()| JsonValue::Null),
        });
    clean.map_err(|e| JsFailure::from(e).message)
}

/// A JS value as free-form JSON, read by walking it (its arrays, and its
/// objects' own enumerable string keys in order, as `JSON.stringify` sees
/// them): integers up to 2^53 - 1 are exact, other numbers floats,
/// `undefined` is null. What JSON cannot carry (a function, a symbol, a
/// BigInt) or a nesting deeper than [`MAX_NESTING`] is an error naming
/// nothing of the value. Not serde-wasm-bindgen's deserializer: its error
/// text would link the whole of float printing into the module.
pub fn json_from_js(value: wasm_bindgen::JsValue) -> Result<JsonValue, JsFailure> {
    walk(&value, 0, MAX_NESTING).ok_or_else(|| JsFailure {
        name: "TypeError".into(),
        message: "not a JSON value".into(),
    })
}

/// `v` walked, unless it nests deeper than `max` levels.
fn walk(v: &wasm_bindgen::JsValue, depth: u32, max: u32) -> Option<JsonValue> {
    use wasm_bindgen::JsCast;
    // The commonest kinds first: each test is a crossing.
    if let Some(s) = v.as_string() {
        return Some(JsonValue::String(s));
    }
    if let Some(n) = v.as_f64() {
        return Some(JsonValue::from_js_number(n));
    }
    if let Some(b) = v.as_bool() {
        return Some(JsonValue::Bool(b));
    }
    if v.is_null_or_undefined() {
        return Some(JsonValue::Null);
    }
    // A function is not an object here (`typeof`).
    if depth >= max || !v.is_object() {
        return None;
    }
    if js_sys::Array::is_array(v) {
        let a: &js_sys::Array = v.unchecked_ref();
        return a
            .iter()
            .map(|e| walk(&e, depth + 1, max))
            .collect::<Option<Vec<_>>>()
            .map(JsonValue::Array);
    }
    let entries = js_sys::Object::entries(v.unchecked_ref());
    let mut out = Vec::with_capacity(entries.length() as usize);
    for e in entries.iter() {
        let pair: js_sys::Array = e.unchecked_into();
        out.push((
            pair.get(0).as_string()?,
            walk(&pair.get(1), depth + 1, max)?,
        ));
    }
    Some(JsonValue::Object(out))
}
