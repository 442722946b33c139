//! Payload fingerprints: the same intent key with a different payload is a
//! typed error, never a silent resend (as a replayed idempotency key is).

use crate::protocol::{FloatText, JsonValue};

/// Writes `value` as canonical JSON: object keys sorted, no whitespace,
/// integers as integers. Two equal payloads give equal bytes whatever the
/// key order they were built with. The text of stored fingerprints: it
/// must never change (non-finite numbers keep their `{:?}` text): `float`
/// writes non-integral numbers and must write what
/// [`float_text`](crate::protocol::float_text) writes.
pub(crate) fn canonical_json(
    value: &JsonValue,
    out: &mut String,
    float: &dyn Fn(f64, &mut String),
) {
    value.write_text::<true, _>(out, float);
}

/// SHA-1 (hex) of the parts, each canonicalised and separated.
pub fn fingerprint(parts: &[&JsonValue], float: FloatText) -> String {
    fingerprint_by(parts, &float, 0)
}

/// [`fingerprint`] with a writer that may hold texts already placed (a
/// body's, read from its JSON text).
/// `room`: the text's expected length.
pub fn fingerprint_by(
    parts: &[&JsonValue],
    float: &dyn Fn(f64, &mut String),
    room: usize,
) -> String {
    let mut text = String::with_capacity(room + 256);
    for part in parts {
        canonical_json(part, &mut text, float);
        text.push('\n');
    }
    // Hex by hand: the digest's `Display` would link `core::fmt` into the module.
    let mut hex = String::with_capacity(40);
    for byte in super::sha1::sha1(text.as_bytes()) {
        crate::text::push_hex(&mut hex, u64::from(byte), 2, false);
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::float_text;
    use crate::protocol::test_support::test;

    fn value(text: &str) -> JsonValue {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn canonical_form_ignores_key_order_and_whitespace() {
        let mut a = String::new();
        canonical_json(
            &value(r#"{"b": [1, 2.0, "x\"y\n"], "a": {"d": null, "c": true}}"#),
            &mut a,
            &float_text,
        );
        assert_eq!(a, r#"{"a":{"c":true,"d":null},"b":[1,2,"x\"y\n"]}"#);
        // The canonical text is JSON and means the same thing.
        let back: serde_json::Value = serde_json::from_str(&a).unwrap();
        assert_eq!(back["b"][2], "x\"y\n");
    }

    #[test]
    fn fingerprints_tell_payloads_apart() {
        let one = value(r#"{"amount": 10, "to": "t"}"#);
        let same = value(r#"{"to": "t", "amount": 10.0}"#);
        let other = value(r#"{"to": "t", "amount": 11}"#);
        let path = JsonValue::String("/account/a/prepare".into());
        assert_eq!(
            fingerprint(&[&path, &one], float_text),
            fingerprint(&[&path, &same], float_text)
        );
        assert_ne!(
            fingerprint(&[&path, &one], float_text),
            fingerprint(&[&path, &other], float_text)
        );
        assert_eq!(fingerprint(&[&path, &one], float_text).len(), 40);
        // Part boundaries count.
        let (x, y) = (
            JsonValue::String("ab".into()),
            JsonValue::String("c".into()),
        );
        let (p, q) = (
            JsonValue::String("a".into()),
            JsonValue::String("bc".into()),
        );
        assert_ne!(
            fingerprint(&[&x, &y], float_text),
            fingerprint(&[&p, &q], float_text)
        );
    }
}
