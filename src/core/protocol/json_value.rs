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

    /// Looks up a key of an object.
    pub fn get(&self, key: &str) -> Option<&JsonValue> {
        match self {
            JsonValue::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
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
    pub fn is_empty_object(&self) -> bool {
        matches!(self, JsonValue::Null) || matches!(self, JsonValue::Object(e) if e.is_empty())
    }
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
    use crate::core::protocol::test_support::test;

    #[test]
    fn keeps_any_payload_as_is_in_key_order() {
        let text = r#"{"z":1,"a":[true,null,2.5,"x",{"k":-3}],"big":18446744073709551615}"#;
        let value: JsonValue = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), text);
        assert_eq!(value.get("z").and_then(JsonValue::as_i64), Some(1));
        assert_eq!(value.get("big"), Some(&JsonValue::UInt(u64::MAX)));
        assert!(value.get("missing").is_none());
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
}
