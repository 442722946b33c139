//! Reading a caller's object field by field, with errors that name the
//! field and what it must be (`command.timeoutMs must be a non-negative
//! integer`). What a field must be, what is not given, which keys are
//! unknown and which error is told are decisions: they are here, tested
//! natively; the binding layer only answers what a value is ([`Given`]).

use crate::text::text;
use std::cell::RefCell;
use std::rc::Rc;

/// A value the caller gave, as the binding layer sees it: each question
/// answered without throwing (a Proxy's trap or a throwing getter is an
/// unreadable value, never an exception).
pub trait Given: Sized {
    /// A function the caller gave, as the binding layer calls it.
    type Function;
    /// `undefined`: what a field not given reads as ([`CallerFields::any`]).
    fn nothing() -> Self;
    /// `null` or `undefined`: not given.
    fn is_nothing(&self) -> bool;
    /// `undefined` alone: a field left out, told from one given as `null`.
    fn is_undefined(&self) -> bool;
    /// An object that is not an array (`false` when that cannot be told).
    fn is_record(&self) -> bool;
    /// Field `name`; `None` when reading it threw.
    fn field(&self, name: &str) -> Option<Self>;
    /// The own enumerable string keys; `None` when they cannot be listed.
    fn keys(&self) -> Option<Vec<String>>;
    /// The value as a string, if it is one.
    fn string(&self) -> Option<String>;
    /// The value as a number, if it is one.
    fn number(&self) -> Option<f64>;
    /// The value as a boolean, if it is one.
    fn boolean(&self) -> Option<bool>;
    /// The value as a function, if it is one.
    fn function(self) -> Option<Self::Function>;
    /// The value as an array of strings, if it is one, joined by line
    /// breaks (what it is read for, header names, never holds one).
    fn strings(&self) -> Option<String>;
}

/// Typed reads of a caller's object, one field at a time. `undefined` and
/// `null` are "not given". A bad field is read as not given and its error
/// kept (the first one, shared with nested objects' readers) for
/// [`CallerFields::finish`]: a reader is one straight line with one way
/// out, not a return after every field.
pub struct CallerFields<V> {
    what: String,
    object: V,
    error: Rc<RefCell<Option<String>>>,
    /// Every name a reader asked for: the object's known fields, spelled
    /// once, where they are read ([`CallerFields::known`]).
    asked: RefCell<Vec<String>>,
}

impl<V: Given> CallerFields<V> {
    /// The object at `what`; anything else is refused.
    pub fn of(what: &str, object: V) -> Result<CallerFields<V>, String> {
        CallerFields::within(what, object, Rc::default())
    }

    fn within(
        what: &str,
        object: V,
        error: Rc<RefCell<Option<String>>>,
    ) -> Result<CallerFields<V>, String> {
        if object.is_nothing() {
            return Err(text!(what, " is required"));
        }
        if !object.is_record() {
            return Err(text!(what, " must be an object"));
        }
        Ok(CallerFields {
            what: what.to_owned(),
            object,
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

    /// The error kept (after a [`CallerFields::refuse`]).
    #[inline]
    pub(crate) fn first_error(&self) -> String {
        self.error.borrow_mut().take().unwrap_or_default()
    }

    /// After every field is read: refuses the first of the object's own
    /// keys that no reader asked for, listing the ones it knows (`timeout`
    /// for `timeoutMs` was silently ignored). A list, not the nearest name:
    /// an edit distance cost 490 B gzip of the module, and a reader finds a
    /// misspelling in a list at a glance.
    pub fn known(&self) {
        let asked = self.asked.borrow();
        let unknown = self
            .object
            .keys()
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

    /// A field of any value, read as it is (a storage adapter, or its
    /// name); [`Given::nothing`] when not given.
    #[inline]
    pub fn any(&self, name: &str) -> V {
        self.value(name).unwrap_or_else(V::nothing)
    }

    /// A field's value; `None` when not given, or when reading it threw
    /// (that error kept).
    pub fn value(&self, name: &str) -> Option<V> {
        self.asked.borrow_mut().push(name.to_owned());
        match self.object.field(name) {
            Some(v) if v.is_nothing() => None,
            Some(v) => Some(v),
            None => {
                self.refuse(text!(self.what, ".", name, " could not be read"));
                None
            }
        }
    }

    /// `read` of the field's value; a value it refuses is kept as the error.
    #[inline(always)]
    fn read<T>(&self, name: &str, expected: &str, read: impl FnOnce(V) -> Option<T>) -> Option<T> {
        let value = read(self.value(name)?);
        if value.is_none() {
            self.refuse(text!(self.what, ".", name, " must be ", expected));
        }
        value
    }

    /// A function field.
    pub fn function(&self, name: &str) -> Option<V::Function> {
        self.read(name, "a function", V::function)
    }

    /// A string field.
    pub fn string(&self, name: &str) -> Option<String> {
        self.read(name, "a string", |v| v.string())
    }

    /// A boolean field.
    pub fn boolean(&self, name: &str) -> Option<bool> {
        self.read(name, "true or false", |v| v.boolean())
    }

    /// A finite number field.
    pub fn number(&self, name: &str) -> Option<f64> {
        self.read(name, "a finite number", |v| {
            v.number().filter(|n| n.is_finite())
        })
    }

    /// Whether field `name` is given at all (`null` counts: `undefined`
    /// alone is left out); a field that cannot be read counts as given
    /// (its reader says so).
    pub fn given(&self, name: &str) -> bool {
        self.object.field(name).is_none_or(|v| !v.is_undefined())
    }

    /// An array of strings field, joined by line breaks.
    pub fn strings(&self, name: &str) -> Option<String> {
        self.read(name, "an array of strings", |v| v.strings())
    }

    /// A non-negative integer field (milliseconds, counts, versions).
    pub fn count(&self, name: &str) -> Option<u64> {
        self.read(name, "a non-negative integer", |v| {
            v.number()
                // At most 2^53 - 1: beyond it a number is no longer exact in JS.
                .filter(|n| *n >= 0.0 && *n <= 9_007_199_254_740_991.0 && n.fract() == 0.0)
                .map(|n| n as u64)
        })
    }

    /// A nested object field, read into the same error.
    pub fn object(&self, name: &str) -> Option<CallerFields<V>> {
        let value = self.value(name)?;
        match CallerFields::within(&text!(self.what, ".", name), value, self.error.clone()) {
            Ok(fields) => Some(fields),
            Err(e) => {
                self.refuse(e);
                None
            }
        }
    }

    /// A field read by `read`, which is told the field's path for its
    /// errors (a command body, read within the client's limits).
    pub fn with<T>(
        &self,
        name: &str,
        read: impl FnOnce(&V, &str) -> Result<T, String>,
    ) -> Option<T> {
        match read(&self.value(name)?, &text!(self.what, ".", name)) {
            Ok(value) => Some(value),
            Err(e) => {
                self.refuse(e);
                None
            }
        }
    }

    /// An object of string values (extra headers).
    pub(crate) fn string_map(&self, name: &str) -> Option<Vec<(String, String)>> {
        let map = self.object(name)?;
        let Some(keys) = map.object.keys() else {
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::JsonValue;

    /// A caller's value in a native test: JSON, with a field `"fn"` read
    /// as a function and a field `"throws"` as one whose getter throws.
    #[derive(Clone, Debug)]
    pub(crate) enum Fake {
        Json(JsonValue),
        Function,
        Nothing,
    }

    impl Given for Fake {
        type Function = ();
        fn nothing() -> Fake {
            Fake::Nothing
        }
        fn is_nothing(&self) -> bool {
            matches!(self, Fake::Nothing | Fake::Json(JsonValue::Null))
        }
        fn is_undefined(&self) -> bool {
            matches!(self, Fake::Nothing)
        }
        fn is_record(&self) -> bool {
            matches!(self, Fake::Json(JsonValue::Object(_)))
        }
        fn field(&self, name: &str) -> Option<Fake> {
            let Fake::Json(JsonValue::Object(fields)) = self else {
                return Some(Fake::Nothing);
            };
            Some(match fields.iter().find(|(k, _)| k == name) {
                None => Fake::Nothing,
                Some((_, JsonValue::String(s))) if s == "fn" => Fake::Function,
                Some((_, JsonValue::String(s))) if s == "throws" => return None,
                Some((_, v)) => Fake::Json(v.clone()),
            })
        }
        fn keys(&self) -> Option<Vec<String>> {
            match self {
                Fake::Json(JsonValue::Object(fields)) => {
                    Some(fields.iter().map(|(k, _)| k.clone()).collect())
                }
                _ => Some(Vec::new()),
            }
        }
        fn string(&self) -> Option<String> {
            match self {
                Fake::Json(JsonValue::String(s)) => Some(s.clone()),
                _ => None,
            }
        }
        fn number(&self) -> Option<f64> {
            match self {
                Fake::Json(JsonValue::Int(n)) => Some(*n as f64),
                Fake::Json(JsonValue::Float(n)) => Some(*n),
                _ => None,
            }
        }
        fn boolean(&self) -> Option<bool> {
            match self {
                Fake::Json(JsonValue::Bool(b)) => Some(*b),
                _ => None,
            }
        }
        fn function(self) -> Option<()> {
            matches!(self, Fake::Function).then_some(())
        }
        fn strings(&self) -> Option<String> {
            match self {
                Fake::Json(JsonValue::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str())
                    .collect::<Option<Vec<_>>>()
                    .map(|v| v.join("\n")),
                _ => None,
            }
        }
    }

    pub(crate) fn given(json: &str) -> Fake {
        Fake::Json(serde_json::from_str(json).expect("test JSON"))
    }

    #[test]
    fn reads_each_kind_and_names_the_first_bad_field() {
        let o = CallerFields::of(
            "options",
            given(r#"{"a":"x","n":3,"b":true,"f":"fn","nested":{"m":2.5}}"#),
        )
        .unwrap();
        assert_eq!(o.string("a").as_deref(), Some("x"));
        assert_eq!(o.count("n"), Some(3));
        assert_eq!(o.boolean("b"), Some(true));
        assert!(o.function("f").is_some());
        let nested = o.object("nested").unwrap();
        assert_eq!(nested.number("m"), Some(2.5));
        assert_eq!(nested.count("m"), None);
        assert_eq!(o.string("missing"), None);
        // The nested reader's error is the object's first.
        assert_eq!(
            o.finish(()).unwrap_err(),
            "options.nested.m must be a non-negative integer"
        );
    }

    #[test]
    fn refuses_what_is_not_an_object_and_unknown_keys() {
        assert_eq!(
            CallerFields::of("command", Fake::Nothing).err().unwrap(),
            "command is required"
        );
        assert_eq!(
            CallerFields::of("command", given("[1]")).err().unwrap(),
            "command must be an object"
        );
        let o = CallerFields::of("options", given(r#"{"timeout":5,"baseUrl":"x"}"#)).unwrap();
        let _ = o.string("baseUrl");
        let _ = o.count("timeoutMs");
        o.known();
        assert_eq!(
            o.finish(()).unwrap_err(),
            "options.timeout is not an option (known: baseUrl, timeoutMs)"
        );
    }

    #[test]
    fn a_field_that_throws_or_is_wrong_is_not_given() {
        let o = CallerFields::of(
            "c",
            given(r#"{"g":"throws","n":-1,"x":1e300,"s":5,"h":{"a":"1","b":2}}"#),
        )
        .unwrap();
        assert_eq!(o.value("g").map(|_| ()), None);
        assert_eq!(o.first_error(), "c.g could not be read");
        assert_eq!(o.count("n"), None);
        assert_eq!(
            o.finish(()).unwrap_err(),
            "c.n must be a non-negative integer"
        );
        assert_eq!(o.count("x"), None);
        assert_eq!(o.string("s"), None);
        assert_eq!(o.first_error(), "c.x must be a non-negative integer");
        assert_eq!(o.string_map("h"), Some(vec![("a".into(), "1".into())]));
        assert_eq!(o.finish(()).unwrap_err(), "c.h.b must be a string");
        assert_eq!(
            o.with("h", |_, what| Err::<(), _>(text!(what, " is too deep"))),
            None
        );
        assert_eq!(o.finish(()).unwrap_err(), "c.h is too deep");
        o.function("s");
        assert_eq!(o.finish(()).unwrap_err(), "c.s must be a function");
    }

    #[test]
    fn a_field_given_as_null_is_given_and_strings_are_read() {
        let o = CallerFields::of("o", given(r#"{"u":"alice","n":null}"#)).unwrap();
        assert!(o.given("u") && o.given("n") && !o.given("missing"));
        let o = CallerFields::of("o", given(r#"{"a":["x","y"],"b":["x",1],"c":"x"}"#)).unwrap();
        assert_eq!(o.strings("a"), Some("x\ny".into()));
        for bad in ["b", "c"] {
            assert_eq!(o.strings(bad), None);
            assert_eq!(
                o.finish(()).unwrap_err(),
                text!("o.", bad, " must be an array of strings")
            );
        }
    }
}
