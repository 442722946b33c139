//! A small JSON value that keeps unknown payloads (`result`, event bodies)
//! exactly as received, without pulling `serde_json` into the wasm build.

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Any JSON value. Objects keep their key order.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum JsonValue {
    /// `null`
    #[default]
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer above `i64::MAX`.
    UInt(u64),
    /// Any other number.
    Float(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<JsonValue>),
    /// An object, in wire order.
    Object(Vec<(String, JsonValue)>),
}

impl JsonValue {
    /// An empty object, `{}`.
    pub fn empty_object() -> JsonValue {
        JsonValue::Object(Vec::new())
    }

    /// A JavaScript number as the core holds it: an exact integer (at most
    /// 2^53 − 1 either way, `-0` included) as [`JsonValue::Int`], any other
    /// as [`JsonValue::Float`]. What a value from JS becomes, so what every
    /// stored fingerprint was computed over.
    pub fn from_js_number(n: f64) -> JsonValue {
        if n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0 {
            JsonValue::Int(n as i64)
        } else {
            JsonValue::Float(n)
        }
    }

    /// Looks up a key of an object: a key given twice, its last value, as
    /// serde_json keeps it and every reader takes it (`ObjectReader`).
    pub fn get(&self, key: &str) -> Option<&JsonValue> {
        match self {
            JsonValue::Object(entries) => entries.iter().rfind(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsonValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number as `i64`, when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            JsonValue::Int(i) => Some(i),
            JsonValue::UInt(u) => i64::try_from(u).ok(),
            JsonValue::Float(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                Some(f as i64)
            }
            _ => None,
        }
    }

    /// Whether this is an empty object or `null`.
    #[cfg(test)]
    pub(crate) fn is_empty_object(&self) -> bool {
        matches!(self, JsonValue::Null) || matches!(self, JsonValue::Object(e) if e.is_empty())
    }

    /// The JSON text of the value, keys in their order, no whitespace: what
    /// `JSON.parse` reads back as the value `JSON.stringify` would have
    /// written (a number that is not finite is `null`). Written here rather
    /// than by the engine so a record or a body crosses into JS as one
    /// string, not as an object built field by field. `float` writes the
    /// finite non-integral numbers: [`float_text`], or the engine's own
    /// text in a module that would otherwise carry no float printing.
    #[cfg(test)]
    pub(crate) fn to_json_text(&self, float: FloatText) -> String {
        let mut out = String::with_capacity(256);
        self.write_text::<false, _>(&mut out, &float);
        out
    }

    /// Writes the text: `CANONICAL` sorts object keys and keeps the
    /// fingerprints' `{:?}` text for numbers that are not finite (a const,
    /// so a module that never fingerprints carries no sort).
    pub(crate) fn write_text<const CANONICAL: bool, F: Fn(f64, &mut String) + ?Sized>(
        &self,
        out: &mut String,
        float: &F,
    ) {
        use crate::text::Piece;
        match self {
            JsonValue::Null => out.push_str("null"),
            JsonValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            JsonValue::Int(i) => i.push_to(out),
            JsonValue::UInt(u) => u.push_to(out),
            JsonValue::Float(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                // 2.0 and 2 are the same JSON number to JavaScript.
                (*f as i64).push_to(out);
            }
            JsonValue::Float(f) if !CANONICAL && !f.is_finite() => out.push_str("null"),
            JsonValue::Float(f) => float(*f, out),
            JsonValue::String(s) => write_string(s, out),
            JsonValue::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_text::<CANONICAL, F>(out, float);
                }
                out.push(']');
            }
            JsonValue::Object(entries) => {
                out.push('{');
                let mut entry = |n: usize, (k, v): &(String, JsonValue)| {
                    if n > 0 {
                        out.push(',');
                    }
                    write_string(k, out);
                    out.push(':');
                    v.write_text::<CANONICAL, F>(out, float);
                };
                if CANONICAL {
                    let keys = entries.iter().map(|(k, _)| (0, k.as_str())).collect();
                    for (n, i) in crate::order::ascending(keys).into_iter().enumerate() {
                        entry(n, &entries[i]);
                    }
                } else {
                    for (n, e) in entries.iter().enumerate() {
                        entry(n, e);
                    }
                }
                out.push('}');
            }
        }
    }
}

/// How a number that is not an integer is written into JSON text.
pub(crate) type FloatText = fn(f64, &mut String);

/// A non-integral number as `{:?}` writes it (the fingerprints stored
/// before this function kept that text), without `Debug`: the shipped
/// module is built with `-Zfmt-debug=none`, where `{:?}` writes nothing.
/// Debug prints the shortest round-trip digits, in exponent form outside
/// 1e-4 ≤ |f| < 1e16, and always with a `.` otherwise: JSON for every
/// finite number. Native callers' writer: the shipped modules have their
/// engine place its own shortest digits the same way (`floatText` in
/// `src/web/engine_text.js`, held equal to this in each engine by the
/// module's tests) and never link it.
#[allow(clippy::disallowed_macros)]
pub fn float_text(f: f64, out: &mut String) {
    use std::fmt::Write;
    let magnitude = f.abs();
    if f.is_finite() && magnitude != 0.0 && !(1e-4..1e16).contains(&magnitude) {
        let _ = write!(out, "{f:e}");
        return;
    }
    let start = out.len();
    let _ = write!(out, "{f}");
    if f.is_finite() && !out[start..].contains('.') {
        out.push_str(".0");
    }
}

/// Writes `s` as a JSON string.
pub(crate) fn write_string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                out.push_str("\\u00");
                out.push(HEX[c as usize >> 4] as char);
                out.push(HEX[c as usize & 15] as char);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl Serialize for JsonValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            JsonValue::Null => s.serialize_unit(),
            JsonValue::Bool(b) => s.serialize_bool(*b),
            JsonValue::Int(i) => s.serialize_i64(*i),
            JsonValue::UInt(u) => s.serialize_u64(*u),
            JsonValue::Float(f) => s.serialize_f64(*f),
            JsonValue::String(v) => s.serialize_str(v),
            JsonValue::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            JsonValue::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// A value serialised with its integers as `f64`: what a JS number holds
/// (the nearest one beyond 2^53), so a serializer into JS values needs no
/// 64-bit integer writer of its own.
pub struct JsNumbers<'a>(pub &'a JsonValue);

impl Serialize for JsNumbers<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            JsonValue::Null => s.serialize_unit(),
            JsonValue::Bool(b) => s.serialize_bool(*b),
            JsonValue::Int(i) => s.serialize_f64(*i as f64),
            JsonValue::UInt(u) => s.serialize_f64(*u as f64),
            JsonValue::Float(f) => s.serialize_f64(*f),
            JsonValue::String(v) => s.serialize_str(v),
            JsonValue::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&JsNumbers(item))?;
                }
                seq.end()
            }
            JsonValue::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, &JsNumbers(v))?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

/// The deepest nesting of arrays and objects a [`JsonValue`] is read with:
/// a deeper value (a hostile server's answer, a corrupt record) is refused
/// instead of exhausting the stack, which in wasm would trap.
pub const MAX_NESTING: u32 = 512;

std::thread_local! {
    static NESTING: ::core::cell::Cell<u32> = const { ::core::cell::Cell::new(0) };
}

/// One level of nesting, left again on drop.
struct Nested;

impl Nested {
    fn enter<E: serde::de::Error>() -> Result<Nested, E> {
        NESTING.with(|n| {
            if n.get() >= MAX_NESTING {
                Err(E::custom("JSON nested too deeply"))
            } else {
                n.set(n.get() + 1);
                Ok(Nested)
            }
        })
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        NESTING.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = JsonValue;

    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<JsonValue, E> {
        Ok(JsonValue::Null)
    }
    fn visit_none<E>(self) -> Result<JsonValue, E> {
        Ok(JsonValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<JsonValue, D::Error> {
        JsonValue::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<JsonValue, E> {
        Ok(JsonValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<JsonValue, E> {
        Ok(JsonValue::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<JsonValue, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => JsonValue::Int(i),
            Err(_) => JsonValue::UInt(v),
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<JsonValue, E> {
        Ok(JsonValue::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<JsonValue, E> {
        Ok(JsonValue::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<JsonValue, E> {
        Ok(JsonValue::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonValue, A::Error> {
        let _level = Nested::enter()?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(JsonValue::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonValue, A::Error> {
        let _level = Nested::enter()?;
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some((k, v)) = map.next_entry::<String, JsonValue>()? {
            entries.push((k, v));
        }
        Ok(JsonValue::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    #[test]
    fn js_numbers_writes_every_integer_as_a_float() {
        let text = r#"{"v":7,"a":[-3,18446744073709551615,2.5],"s":"x","n":null,"b":true}"#;
        let value: JsonValue = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&JsNumbers(&value)).unwrap(),
            r#"{"v":7.0,"a":[-3.0,1.8446744073709552e+19,2.5],"s":"x","n":null,"b":true}"#
        );
    }

    #[test]
    fn keeps_any_payload_as_is_in_key_order() {
        let text = r#"{"z":1,"a":[true,null,2.5,"x",{"k":-3}],"big":18446744073709551615}"#;
        let value: JsonValue = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), text);
        assert_eq!(value.get("z").and_then(JsonValue::as_i64), Some(1));
        assert_eq!(value.get("big"), Some(&JsonValue::UInt(u64::MAX)));
        assert!(value.get("missing").is_none());
        // A key given twice: its last value, as serde_json and every reader take it.
        let twice: JsonValue = serde_json::from_str(r#"{"v":1,"v":2}"#).unwrap();
        assert_eq!(twice.get("v"), Some(&JsonValue::Int(2)));
        assert!(JsonValue::empty_object().is_empty_object());
        assert!(!value.is_empty_object());
    }

    #[test]
    fn refuses_nesting_beyond_its_limit_and_recovers() {
        let read = |n: usize| {
            let text = format!("{}{}", "[".repeat(n), "]".repeat(n));
            let mut de = serde_json::Deserializer::from_str(&text);
            de.disable_recursion_limit();
            JsonValue::deserialize(&mut de)
        };
        assert!(read(MAX_NESTING as usize).is_ok());
        assert!(read(MAX_NESTING as usize + 1).is_err());
        assert!(read(100_000).is_err(), "refused, not a stack overflow");
        // The counter is back at zero after a refusal.
        assert!(read(MAX_NESTING as usize).is_ok());
    }

    #[test]
    fn json_text_keeps_key_order_and_writes_what_json_cannot_carry_as_null() {
        let value = JsonValue::Object(vec![
            ("z".into(), JsonValue::Float(f64::NAN)),
            ("a".into(), JsonValue::Float(2.0)),
            ("q\"\u{1}\n".into(), JsonValue::Float(-1.5e-7)),
            ("big".into(), JsonValue::UInt(u64::MAX)),
        ]);
        assert_eq!(
            value.to_json_text(float_text),
            r#"{"z":null,"a":2,"q\"\u0001\n":-1.5e-7,"big":18446744073709551615}"#
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod property {
        use super::{float_text, JsonValue};
        use proptest::prelude::*;

        /// What the text must read back as: integral floats are integers to
        /// JSON readers, and a number that is not finite is `null`.
        fn as_read_back(value: &JsonValue) -> JsonValue {
            match value {
                JsonValue::Float(f) if !f.is_finite() => JsonValue::Null,
                JsonValue::Float(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                    JsonValue::Int(*f as i64)
                }
                JsonValue::Array(items) => {
                    JsonValue::Array(items.iter().map(as_read_back).collect())
                }
                JsonValue::Object(entries) => JsonValue::Object(
                    entries
                        .iter()
                        .map(|(k, v)| (k.clone(), as_read_back(v)))
                        .collect(),
                ),
                other => other.clone(),
            }
        }

        fn any_json() -> impl Strategy<Value = JsonValue> {
            let leaf = prop_oneof![
                Just(JsonValue::Null),
                any::<bool>().prop_map(JsonValue::Bool),
                any::<i64>().prop_map(JsonValue::Int),
                (i64::MAX as u64 + 1..=u64::MAX).prop_map(JsonValue::UInt),
                any::<f64>().prop_map(JsonValue::Float),
                any::<u64>().prop_map(|bits| JsonValue::Float(f64::from_bits(bits))),
                any::<String>().prop_map(JsonValue::String),
            ];
            leaf.prop_recursive(4, 48, 6, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..6).prop_map(JsonValue::Array),
                    proptest::collection::vec((any::<String>(), inner), 0..6)
                        .prop_map(JsonValue::Object),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2_000))]
            /// Any value's text is JSON that reads back as the value, in its key order.
            #[test]
            fn json_text_reads_back_as_the_value(value in any_json()) {
                let text = value.to_json_text(float_text);
                let back: JsonValue = serde_json::from_str(&text).unwrap();
                prop_assert_eq!(as_read_back(&back), as_read_back(&value), "{}", text);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod float_text {
    use super::float_text;

    /// [`float_text`]'s text of `f`.
    pub(crate) fn text(f: f64) -> String {
        let mut out = String::new();
        float_text(f, &mut out);
        out
    }

    #[test]
    fn floats_are_written_as_debug_writes_them() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            0.1,
            0.2 + 0.1,
            1e-4,
            9.999e-5,
            1e-5,
            1.5e-7,
            1e15 + 0.5,
            9.999_999_999_999_998e15,
            1e16,
            1.5e16,
            1e21,
            1e300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            -1e-7,
            -2.5e22,
            123.456,
            std::f64::consts::PI,
            1e16 - 2.0,
            1e-4 * 1.000_000_1,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        // And a spread over the exponents: a hundred thousand deterministic values.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(f64::from_bits(x));
        }
        for f in values {
            assert_eq!(text(f), format!("{f:?}"), "bits {:#x}", f.to_bits());
        }
    }
}

/// Limits on a caller's free-form JSON (a command body), checked before
/// anything is persisted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonLimits {
    /// The longest JSON text, in UTF-16 code units (default 1 MiB).
    pub max_chars: u32,
    /// The deepest nesting of arrays and objects (default 64).
    pub max_depth: u32,
}

impl Default for JsonLimits {
    fn default() -> Self {
        JsonLimits {
            max_chars: 1 << 20,
            max_depth: 64,
        }
    }
}
