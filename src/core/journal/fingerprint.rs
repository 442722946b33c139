//! Payload fingerprints: the same intent key with a different payload is a
//! typed error, never a silent resend (as a replayed idempotency key is).

use crate::core::protocol::JsonValue;

/// Writes `value` as canonical JSON: object keys sorted, no whitespace,
/// integers as integers. Two equal payloads give equal bytes whatever the
/// key order they were built with.
pub fn canonical_json(value: &JsonValue, out: &mut String) {
    use std::fmt::Write;
    match value {
        JsonValue::Null => out.push_str("null"),
        JsonValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        JsonValue::Int(i) => {
            let _ = write!(out, "{i}");
        }
        JsonValue::UInt(u) => {
            let _ = write!(out, "{u}");
        }
        JsonValue::Float(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
            // 2.0 and 2 are the same JSON number to JavaScript.
            let _ = write!(out, "{}", *f as i64);
        }
        JsonValue::Float(f) => write_float(*f, out),
        JsonValue::String(s) => write_string(s, out),
        JsonValue::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        JsonValue::Object(entries) => {
            let mut sorted: Vec<&(String, JsonValue)> = entries.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                canonical_json(v, out);
            }
            out.push('}');
        }
    }
}

/// A non-integral number as `{:?}` writes it (the fingerprints stored
/// before this function kept that text), without `Debug`: the shipped
/// module is built with `-Zfmt-debug=none`, where `{:?}` writes nothing.
/// Debug prints the shortest round-trip digits, in exponent form outside
/// 1e-4 ≤ |f| < 1e16, and always with a `.` otherwise.
fn write_float(f: f64, out: &mut String) {
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

fn write_string(s: &str, out: &mut String) {
    use std::fmt::Write;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// SHA-1 (hex) of the parts, each canonicalised and separated.
pub fn fingerprint(parts: &[&JsonValue]) -> String {
    let mut text = String::new();
    for part in parts {
        canonical_json(part, &mut text);
        text.push('\n');
    }
    sha1_smol::Sha1::from(text.as_bytes()).digest().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::protocol::test_support::test;

    fn value(text: &str) -> JsonValue {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn canonical_form_ignores_key_order_and_whitespace() {
        let mut a = String::new();
        canonical_json(
            &value(r#"{"b": [1, 2.0, "x\"y\n"], "a": {"d": null, "c": true}}"#),
            &mut a,
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
        assert_eq!(fingerprint(&[&path, &one]), fingerprint(&[&path, &same]));
        assert_ne!(fingerprint(&[&path, &one]), fingerprint(&[&path, &other]));
        assert_eq!(fingerprint(&[&path, &one]).len(), 40);
        // Part boundaries count.
        let (x, y) = (
            JsonValue::String("ab".into()),
            JsonValue::String("c".into()),
        );
        let (p, q) = (
            JsonValue::String("a".into()),
            JsonValue::String("bc".into()),
        );
        assert_ne!(fingerprint(&[&x, &y]), fingerprint(&[&p, &q]));
    }
}

#[cfg(test)]
mod float_text {
    use super::write_float;

    fn text(f: f64) -> String {
        let mut out = String::new();
        write_float(f, &mut out);
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
