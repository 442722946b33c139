//! Hand-written conversions of the core's typed values: written straight
//! to JSON text ([`ToJson`]: no tree of values is built and copied first),
//! read from a [`JsonValue`] ([`FromJson`]); in exactly the shape their
//! serde derives write.
//!
//! Why both: the serde derives are the reference (native callers, the test
//! gateway, serde_json in tests), while the wasm build converts through these
//! instead. A derived `Deserialize` is a visitor state machine per type, and
//! was most of the module's size; these are a few calls per field. Each
//! type's tests check that both write the same JSON and read each other's.

use ::core::fmt;

use super::json_value::{FloatText, JsonValue};

/// Why a value did not convert; static text, so building one formats nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// What went wrong.
    pub what: &'static str,
    /// The field it concerns, when serde names one.
    pub field: Option<&'static str>,
}

impl JsonError {
    /// The message (what `Display` writes).
    pub fn message(&self) -> String {
        match self.field {
            Some(field) => crate::text::text!(self.what, " `", field, "`"),
            None => self.what.to_owned(),
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for JsonError {}

/// JSON text being written: every typed value goes straight into it, its
/// non-integral numbers written by `float` (the engine's digits in the
/// shipped modules, [`float_text`](super::float_text) natively).
pub struct JsonOut {
    /// The text so far.
    pub text: String,
    float: FloatText,
}

impl JsonOut {
    /// Empty text, numbers written by `float`.
    pub fn new(float: FloatText) -> JsonOut {
        JsonOut {
            text: String::with_capacity(256),
            float,
        }
    }

    /// `value`'s JSON text.
    pub fn of(value: &(impl ToJson + ?Sized), float: FloatText) -> String {
        let mut out = JsonOut::new(float);
        value.write_json(&mut out);
        out.text
    }

    /// How its non-integral numbers are written.
    pub fn float(&self) -> FloatText {
        self.float
    }

    /// Free-form JSON.
    pub fn value(&mut self, value: &JsonValue) {
        value.write_text::<false, _>(&mut self.text, &self.float);
    }
}

/// A value written as JSON, as its serde derive writes it.
pub trait ToJson {
    /// Writes the value's JSON into `out`.
    fn write_json(&self, out: &mut JsonOut);
}

/// A value read from JSON, accepting what its serde derive accepts. It takes
/// the value, so strings and nested values move out instead of being copied.
pub trait FromJson: Sized {
    /// Reads the value.
    fn from_json(value: JsonValue) -> Result<Self, JsonError>;
}

const WRONG_TYPE: JsonError = JsonError {
    what: "a value of the wrong type",
    field: None,
};

/// Names the field an error came from, when the error does not name one yet.
fn in_field(e: JsonError, field: &'static str) -> JsonError {
    JsonError {
        what: e.what,
        field: e.field.or(Some(field)),
    }
}

/// One field list per wire object: the struct and, from the same list, its
/// [`ToJson`] (each field written by its rule, in order) and [`FromJson`]
/// (each field read by its rule, the first bad one named). Each field says
/// its JSON name and two rules, how it is written / how it is read:
/// `put` / `req` (always there), `some` / `opt` (an `Option`, absent when
/// `None`), `put` / `or_default` and `non_empty` / `or_default` (a default
/// when absent; a list written only when it has an element; an answer's
/// `or_default_if_null` also when `null`). The struct's
/// own attributes (docs, derives) come first, a field's before its name. A
/// field whose Rust type says less than the wire promises gives its
/// TypeScript after `as`.
macro_rules! wire_object {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                $field:ident: $ty:ty => $json:literal $write:ident / $read:ident $(as $ts:literal)?,
            )*
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl $crate::protocol::json_codec::ToJson for $name {
            fn write_json(&self, out: &mut $crate::protocol::json_codec::JsonOut) {
                $crate::protocol::json_codec::ObjectWriter::new(out)
                    $( .$write($json, &self.$field) )*
                    .done()
            }
        }

        impl $crate::protocol::json_codec::FromJson for $name {
            fn from_json(
                value: $crate::protocol::json_value::JsonValue,
            ) -> Result<Self, $crate::protocol::json_codec::JsonError> {
                let mut o = $crate::protocol::json_codec::ObjectReader::of(value)?;
                let read = $name { $( $field: o.$read($json), )* };
                o.finish(read)
            }
        }

        // Its TypeScript, from the same list (the `wire_fields` test writes it out).
        #[cfg(test)]
        impl $crate::protocol::declaration::TsType for $name {
            fn ts() -> String {
                stringify!($name).into()
            }
        }

        #[cfg(test)]
        impl $crate::protocol::declaration::Declared for $name {
            fn declaration() -> String {
                use $crate::protocol::declaration::{Field, TsType};
                $crate::protocol::declaration::interface(
                    stringify!($name),
                    &[$(stringify!($meta)),*],
                    &[$(Field {
                        json: $json,
                        write: stringify!($write),
                        // A type given after `as` comes first.
                        ts: [$($ts.to_owned(),)? <$ty as TsType>::ts()].into_iter().next().unwrap(),
                        nullable: <$ty as TsType>::NULLABLE,
                        attributes: &[$(stringify!($field_meta)),*],
                    }),*],
                )
            }
        }
    };
}
pub(crate) use wire_object;

/// Writes a JSON object field by field, in the order serde writes them.
pub(crate) struct ObjectWriter<'a> {
    out: &'a mut JsonOut,
    empty: bool,
}

impl<'a> ObjectWriter<'a> {
    /// An object, begun in `out`.
    pub fn new(out: &'a mut JsonOut) -> ObjectWriter<'a> {
        out.text.push('{');
        ObjectWriter { out, empty: true }
    }
    /// Writes `key` (one of the crate's own names: nothing to escape).
    pub fn put(&mut self, key: &str, value: &(impl ToJson + ?Sized)) -> &mut ObjectWriter<'a> {
        self.key(key);
        value.write_json(self.out);
        self
    }
    fn key(&mut self, key: &str) {
        let text = &mut self.out.text;
        text.push_str(if self.empty { "\"" } else { ",\"" });
        text.push_str(key);
        text.push_str("\":");
        self.empty = false;
    }
    /// Writes `key` unless it is `None` (`skip_serializing_if = "Option::is_none"`).
    pub fn some<T: ToJson>(&mut self, key: &str, value: &Option<T>) -> &mut ObjectWriter<'a> {
        if let Some(v) = value {
            self.put(key, v);
        }
        self
    }
    /// Writes `key` unless the list is empty (`skip_serializing_if = "Vec::is_empty"`).
    pub(crate) fn non_empty<T: ToJson>(&mut self, key: &str, value: &[T]) -> &mut ObjectWriter<'a> {
        if !value.is_empty() {
            self.put(key, value);
        }
        self
    }
    /// Ends the object.
    pub fn done(&mut self) {
        self.out.text.push('}');
    }
}

/// Reads a JSON object's fields by name, taking each out of the object.
/// The first error sticks and the rest of the fields are still read (as
/// their defaults when they fail), so a reader is one straight line with
/// one way out ([`ObjectReader::finish`]) instead of a return, and the drops
/// it needs, after every field.
pub(crate) struct ObjectReader {
    entries: Vec<(String, JsonValue)>,
    error: Option<JsonError>,
}

impl ObjectReader {
    /// The object `value` is; anything else is the wrong type.
    pub fn of(value: JsonValue) -> Result<ObjectReader, JsonError> {
        match value {
            JsonValue::Object(entries) => Ok(ObjectReader {
                entries,
                error: None,
            }),
            _ => Err(WRONG_TYPE),
        }
    }
    /// Takes the field's value, when present (the last one, as serde_json keeps it).
    pub fn take(&mut self, key: &str) -> Option<JsonValue> {
        let at = self.entries.iter().rposition(|(k, _)| k == key)?;
        Some(self.entries.swap_remove(at).1)
    }
    /// Keeps the first error.
    fn fail(&mut self, e: JsonError, key: &'static str) {
        if self.error.is_none() {
            self.error = Some(in_field(e, key));
        }
    }
    fn read<T: FromJson + Default>(&mut self, key: &'static str, value: JsonValue) -> T {
        match T::from_json(value) {
            Ok(v) => v,
            Err(e) => {
                self.fail(e, key);
                T::default()
            }
        }
    }
    /// A field that must be present.
    pub fn req<T: FromJson + Default>(&mut self, key: &'static str) -> T {
        match self.take(key) {
            Some(v) => self.read(key, v),
            None => {
                self.fail(MISSING, key);
                T::default()
            }
        }
    }
    /// A field that must be present, whatever JSON it holds.
    pub fn any(&mut self, key: &'static str) -> JsonValue {
        self.req(key)
    }
    /// A field that may be absent or `null`.
    pub fn opt<T: FromJson>(&mut self, key: &'static str) -> Option<T> {
        match T::from_json(self.present(key)?) {
            Ok(v) => Some(v),
            Err(e) => {
                self.fail(e, key);
                None
            }
        }
    }
    /// The field's value unless it is absent or `null`.
    fn present(&mut self, key: &str) -> Option<JsonValue> {
        self.take(key).filter(|v| !matches!(v, JsonValue::Null))
    }
    /// The default when absent or `null`: an answer's optional parts, which
    /// a gateway or a proxy in front of it may write as `null`.
    pub(crate) fn or_default_if_null<T: FromJson + Default>(&mut self, key: &'static str) -> T {
        match self.present(key) {
            None => T::default(),
            Some(v) => self.read(key, v),
        }
    }
    /// Any JSON, `{}` when absent or `null` (a CommandResult's `result`).
    pub(crate) fn or_empty_object(&mut self, key: &'static str) -> JsonValue {
        self.present(key).unwrap_or_else(JsonValue::empty_object)
    }
    /// A field that defaults when absent (`#[serde(default)]`).
    pub(crate) fn or_default<T: FromJson + Default>(&mut self, key: &'static str) -> T {
        match self.take(key) {
            None => T::default(),
            Some(v) => self.read(key, v),
        }
    }
    /// The value read, or the first error met reading it.
    pub fn finish<T>(self, value: T) -> Result<T, JsonError> {
        match self.error {
            None => Ok(value),
            Some(e) => Err(e),
        }
    }
}

const MISSING: JsonError = JsonError {
    what: "a missing field",
    field: None,
};

/// A unit-only enum's wire name, as `#[serde(rename_all = …)]` spells it.
pub(crate) fn read_name(value: &JsonValue) -> Result<&str, JsonError> {
    value.as_str().ok_or(WRONG_TYPE)
}

/// Writes a unit enum's wire name from its table of `(variant, name)`.
pub(crate) fn wire_name<T: PartialEq>(table: &[(T, &'static str)], value: &T, out: &mut JsonOut) {
    let name = table
        .iter()
        .find(|(v, _)| v == value)
        .map_or("", |(_, n)| n);
    name.write_json(out);
}

/// The variant a wire name stands for in `table`; `None` for a name it lacks.
pub(crate) fn wire_variant<T: Copy>(
    table: &[(T, &'static str)],
    value: &JsonValue,
) -> Result<Option<T>, JsonError> {
    let name = read_name(value)?;
    Ok(table.iter().find(|(_, n)| *n == name).map(|(v, _)| *v))
}

/// The error for a name no variant has.
pub(crate) const UNKNOWN_NAME: JsonError = JsonError {
    what: "an unknown name",
    field: None,
};

impl ToJson for JsonValue {
    fn write_json(&self, out: &mut JsonOut) {
        out.value(self);
    }
}
impl FromJson for JsonValue {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        Ok(value)
    }
}

impl ToJson for str {
    fn write_json(&self, out: &mut JsonOut) {
        super::json_value::write_string(self, &mut out.text);
    }
}
impl ToJson for String {
    fn write_json(&self, out: &mut JsonOut) {
        self.as_str().write_json(out);
    }
}
impl FromJson for String {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        match value {
            JsonValue::String(s) => Ok(s),
            _ => Err(WRONG_TYPE),
        }
    }
}

impl ToJson for bool {
    fn write_json(&self, out: &mut JsonOut) {
        out.text.push_str(if *self { "true" } else { "false" });
    }
}
impl FromJson for bool {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        match value {
            JsonValue::Bool(b) => Ok(b),
            _ => Err(WRONG_TYPE),
        }
    }
}

impl ToJson for i64 {
    fn write_json(&self, out: &mut JsonOut) {
        crate::text::Piece::push_to(self, &mut out.text);
    }
}
impl FromJson for i64 {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        match value {
            JsonValue::Int(i) => Ok(i),
            JsonValue::UInt(u) => i64::try_from(u).map_err(|_| WRONG_TYPE),
            _ => Err(WRONG_TYPE),
        }
    }
}

impl ToJson for u64 {
    fn write_json(&self, out: &mut JsonOut) {
        crate::text::Piece::push_to(self, &mut out.text);
    }
}
impl FromJson for u64 {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        match value {
            JsonValue::Int(i) => u64::try_from(i).map_err(|_| WRONG_TYPE),
            JsonValue::UInt(u) => Ok(u),
            _ => Err(WRONG_TYPE),
        }
    }
}

impl ToJson for u32 {
    fn write_json(&self, out: &mut JsonOut) {
        u64::from(*self).write_json(out);
    }
}
impl FromJson for u32 {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        u32::try_from(u64::from_json(value)?).map_err(|_| WRONG_TYPE)
    }
}

impl<T: ToJson + ?Sized> ToJson for &T {
    fn write_json(&self, out: &mut JsonOut) {
        (**self).write_json(out);
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn write_json(&self, out: &mut JsonOut) {
        match self {
            Some(v) => v.write_json(out),
            None => out.text.push_str("null"),
        }
    }
}

impl<T: ToJson> ToJson for [T] {
    fn write_json(&self, out: &mut JsonOut) {
        out.text.push('[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.text.push(',');
            }
            item.write_json(out);
        }
        out.text.push(']');
    }
}
impl<T: ToJson> ToJson for Vec<T> {
    fn write_json(&self, out: &mut JsonOut) {
        self.as_slice().write_json(out);
    }
}
impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        match value {
            // A loop, not `collect` into a `Result`: its adapters were
            // instantiated again for every element type.
            JsonValue::Array(items) => {
                let mut read = Vec::with_capacity(items.len());
                for item in items {
                    read.push(T::from_json(item)?);
                }
                Ok(read)
            }
            _ => Err(WRONG_TYPE),
        }
    }
}

/// A pair, as serde writes a tuple: `[a, b]`.
impl ToJson for (String, String) {
    fn write_json(&self, out: &mut JsonOut) {
        out.text.push('[');
        self.0.write_json(out);
        out.text.push(',');
        self.1.write_json(out);
        out.text.push(']');
    }
}
impl FromJson for (String, String) {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        match value {
            JsonValue::Array(items) if items.len() == 2 => {
                let mut items = items.into_iter();
                let first = String::from_json(items.next().unwrap_or_default())?;
                let second = String::from_json(items.next().unwrap_or_default())?;
                Ok((first, second))
            }
            _ => Err(WRONG_TYPE),
        }
    }
}

/// Checks, for a value and its serde derive, that both write the same JSON
/// and that each reads what the other wrote (`FromJson` from serde_json's text).
#[cfg(test)]
pub(crate) fn assert_same_as_serde<T>(value: &T)
where
    T: ToJson
        + FromJson
        + serde::Serialize
        + serde::de::DeserializeOwned
        + PartialEq
        + std::fmt::Debug,
{
    let text = JsonOut::of(value, super::json_value::float_text);
    let theirs: serde_json::Value = serde_json::to_value(value).unwrap();
    let ours_as_serde: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(ours_as_serde, theirs, "write_json writes what serde writes");
    let parsed: JsonValue = serde_json::from_value(theirs).unwrap();
    assert_eq!(
        &T::from_json(parsed).unwrap(),
        value,
        "from_json reads what serde wrote"
    );
    assert_eq!(
        &serde_json::from_str::<T>(&text).unwrap(),
        value,
        "serde reads what write_json wrote"
    );
}
