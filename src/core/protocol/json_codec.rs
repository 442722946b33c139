//! Hand-written conversions between the core's typed values and
//! [`JsonValue`], in exactly the shape their serde derives write.
//!
//! Why both: the serde derives are the reference (native callers, the test
//! gateway, serde_json in tests), while the wasm build converts through these
//! instead. A derived `Deserialize` is a visitor state machine per type, and
//! was most of the module's size; these are a few calls per field. Each
//! type's tests check that both write the same JSON and read each other's.

use ::core::fmt;

use super::JsonValue;

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
            Some(field) => crate::core::text::text!(self.what, " `", field, "`"),
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

/// A value written as JSON, as its serde derive writes it.
pub trait ToJson {
    /// The value as JSON.
    fn to_json(&self) -> JsonValue;
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

/// Builds a JSON object field by field, in the order serde writes them.
#[derive(Default)]
pub struct ObjectWriter(Vec<(String, JsonValue)>);

impl ObjectWriter {
    /// An empty object.
    pub fn new() -> ObjectWriter {
        ObjectWriter(Vec::with_capacity(8))
    }
    /// Writes `key`.
    pub fn put(mut self, key: &str, value: &(impl ToJson + ?Sized)) -> ObjectWriter {
        self.0.push((key.to_owned(), value.to_json()));
        self
    }
    /// Writes `key` unless it is `None` (`skip_serializing_if = "Option::is_none"`).
    pub fn some<T: ToJson>(self, key: &str, value: &Option<T>) -> ObjectWriter {
        match value {
            Some(v) => self.put(key, v),
            None => self,
        }
    }
    /// Writes `key` unless the list is empty (`skip_serializing_if = "Vec::is_empty"`).
    pub fn non_empty<T: ToJson>(self, key: &str, value: &[T]) -> ObjectWriter {
        if value.is_empty() {
            self
        } else {
            self.put(key, value)
        }
    }
    /// The object.
    pub fn done(self) -> JsonValue {
        JsonValue::Object(self.0)
    }
}

/// Reads a JSON object's fields by name, taking each out of the object.
/// The first error sticks and the rest of the fields are still read (as
/// their defaults when they fail), so a reader is one straight line with
/// one way out ([`ObjectReader::finish`]) instead of a return, and the drops
/// it needs, after every field.
pub struct ObjectReader {
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
    /// A field that defaults when absent (`#[serde(default)]`).
    pub fn or_default<T: FromJson + Default>(&mut self, key: &'static str) -> T {
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
pub fn read_name(value: &JsonValue) -> Result<&str, JsonError> {
    value.as_str().ok_or(WRONG_TYPE)
}

/// A unit enum's wire name from its table of `(variant, name)`.
pub fn wire_name<T: PartialEq>(table: &[(T, &'static str)], value: &T) -> JsonValue {
    let name = table
        .iter()
        .find(|(v, _)| v == value)
        .map_or("", |(_, n)| n);
    name.to_json()
}

/// The variant a wire name stands for in `table`; `None` for a name it lacks.
pub fn wire_variant<T: Copy>(
    table: &[(T, &'static str)],
    value: &JsonValue,
) -> Result<Option<T>, JsonError> {
    let name = read_name(value)?;
    Ok(table.iter().find(|(_, n)| *n == name).map(|(v, _)| *v))
}

/// The error for a name no variant has.
pub const UNKNOWN_NAME: JsonError = JsonError {
    what: "an unknown name",
    field: None,
};

impl ToJson for JsonValue {
    fn to_json(&self) -> JsonValue {
        self.clone()
    }
}
impl FromJson for JsonValue {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        Ok(value)
    }
}

impl ToJson for str {
    fn to_json(&self) -> JsonValue {
        JsonValue::String(self.to_owned())
    }
}
impl ToJson for String {
    fn to_json(&self) -> JsonValue {
        JsonValue::String(self.clone())
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
    fn to_json(&self) -> JsonValue {
        JsonValue::Bool(*self)
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
    fn to_json(&self) -> JsonValue {
        JsonValue::Int(*self)
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
    fn to_json(&self) -> JsonValue {
        match i64::try_from(*self) {
            Ok(i) => JsonValue::Int(i),
            Err(_) => JsonValue::UInt(*self),
        }
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
    fn to_json(&self) -> JsonValue {
        JsonValue::Int((*self).into())
    }
}
impl FromJson for u32 {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        u32::try_from(u64::from_json(value)?).map_err(|_| WRONG_TYPE)
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self) -> JsonValue {
        match self {
            Some(v) => v.to_json(),
            None => JsonValue::Null,
        }
    }
}

impl<T: ToJson> ToJson for [T] {
    fn to_json(&self) -> JsonValue {
        JsonValue::Array(self.iter().map(ToJson::to_json).collect())
    }
}
impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(&self) -> JsonValue {
        self.as_slice().to_json()
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
    fn to_json(&self) -> JsonValue {
        JsonValue::Array(vec![self.0.to_json(), self.1.to_json()])
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
    let ours = value.to_json();
    let theirs: serde_json::Value = serde_json::to_value(value).unwrap();
    let ours_as_serde: serde_json::Value = serde_json::to_value(&ours).unwrap();
    assert_eq!(ours_as_serde, theirs, "to_json writes what serde writes");
    let parsed: JsonValue = serde_json::from_value(theirs).unwrap();
    assert_eq!(
        &T::from_json(parsed).unwrap(),
        value,
        "from_json reads what serde wrote"
    );
    let text = serde_json::to_string(&ours).unwrap();
    assert_eq!(
        &serde_json::from_str::<T>(&text).unwrap(),
        value,
        "serde reads what to_json wrote"
    );
}
