//! A caller's body read from the JSON text `JSON.stringify` made of it, in
//! the module, instead of walked value by value across the boundary (a
//! crossing per key, string and number: the 900 KB body's long task).
//!
//! The module carries no float parsing (it would cost 14 KB of gzip), so a
//! number that is not a small integer is left as its text, in document
//! order ([`TextValue::numbers`]), for the engine to read all at once; the
//! fingerprint's text of each is placed from the same digits
//! ([`fingerprint_float_text`]). What the reading makes is what walking
//! the value made: every stored fingerprint and record stays as it was.

use super::json_value::JsonValue;

/// A JSON text read, its numbers other than small integers still text.
#[derive(Debug)]
pub struct TextValue<'a> {
    /// The value; each [`JsonValue::Float`] in it is a placeholder for the
    /// number of the same rank in `numbers`, until [`TextValue::fill`].
    pub value: JsonValue,
    /// The texts of those numbers, in document order.
    pub numbers: Vec<&'a str>,
    /// Whether the value's own JSON text (its numbers in the engine's
    /// text) is the text read: false where a string's escape is not the
    /// one the core writes (`\b`, `\f`, `\/`, a lone surrogate, which
    /// reads as U+FFFD), or the text has spaces.
    pub as_written: bool,
}

/// Why a text did not read.
#[derive(Debug, PartialEq, Eq)]
pub enum TextError {
    /// Not JSON.
    Invalid,
    /// Arrays and objects nested deeper than the limit.
    TooDeep,
}

/// Reads `text`, refusing a nesting deeper than `max_depth` levels (the
/// walk's count: a container at depth `max_depth` is one too many).
pub fn read_json_text(text: &str, max_depth: u32) -> Result<TextValue<'_>, TextError> {
    let mut reader = Reader {
        text,
        at: 0,
        numbers: Vec::new(),
        as_written: true,
        max_depth,
    };
    let value = reader.value(0)?;
    reader.space();
    if reader.at != text.len() {
        return Err(TextError::Invalid);
    }
    Ok(TextValue {
        value,
        numbers: reader.numbers,
        as_written: reader.as_written,
    })
}

impl TextValue<'_> {
    /// The value, its placeholders replaced by `numbers` (the engine's
    /// reading of [`TextValue::numbers`], in order), each as a JS number
    /// becomes ([`JsonValue::from_js_number`]).
    pub fn fill(self, numbers: &[f64]) -> JsonValue {
        let mut value = self.value;
        let mut next = numbers.iter().copied();
        fill(&mut value, &mut next);
        value
    }
}

fn fill(value: &mut JsonValue, next: &mut impl Iterator<Item = f64>) {
    match value {
        JsonValue::Float(_) => *value = JsonValue::from_js_number(next.next().unwrap_or(f64::NAN)),
        JsonValue::Array(items) => items.iter_mut().for_each(|v| fill(v, next)),
        JsonValue::Object(entries) => entries.iter_mut().for_each(|(_, v)| fill(v, next)),
        _ => {}
    }
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
    numbers: Vec<&'a str>,
    as_written: bool,
    max_depth: u32,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
            self.as_written = false;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.space();
        let here = self.peek() == Some(b);
        self.at += usize::from(here);
        here
    }

    fn literal(&mut self, word: &str, value: JsonValue) -> Result<JsonValue, TextError> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(TextError::Invalid)
        }
    }

    fn value(&mut self, depth: u32) -> Result<JsonValue, TextError> {
        self.space();
        match self.peek().ok_or(TextError::Invalid)? {
            b'"' => self.string().map(JsonValue::String),
            b'{' | b'[' if depth >= self.max_depth => Err(TextError::TooDeep),
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b't' => self.literal("true", JsonValue::Bool(true)),
            b'f' => self.literal("false", JsonValue::Bool(false)),
            b'n' => self.literal("null", JsonValue::Null),
            _ => self.number(),
        }
    }

    fn array(&mut self, depth: u32) -> Result<JsonValue, TextError> {
        self.at += 1;
        let mut items = Vec::new();
        if !self.eat(b']') {
            loop {
                items.push(self.value(depth + 1)?);
                if self.eat(b']') {
                    break;
                }
                if !self.eat(b',') {
                    return Err(TextError::Invalid);
                }
            }
        }
        Ok(JsonValue::Array(items))
    }

    fn object(&mut self, depth: u32) -> Result<JsonValue, TextError> {
        self.at += 1;
        let mut entries = Vec::new();
        if !self.eat(b'}') {
            loop {
                self.space();
                if self.peek() != Some(b'"') {
                    return Err(TextError::Invalid);
                }
                let key = self.string()?;
                if !self.eat(b':') {
                    return Err(TextError::Invalid);
                }
                entries.push((key, self.value(depth + 1)?));
                if self.eat(b'}') {
                    break;
                }
                if !self.eat(b',') {
                    return Err(TextError::Invalid);
                }
            }
        }
        Ok(JsonValue::Object(entries))
    }

    /// A number: a small integer (15 digits at most, exact in a JS number
    /// and an `i64`) read here; any other kept as text. `JSON.stringify`
    /// writes no `-0`, so a `-0` is text too (the engine reads it as 0).
    fn number(&mut self) -> Result<JsonValue, TextError> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        let digits = |at: &mut usize| {
            let from = *at;
            while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at - from
        };
        let mut at = start + usize::from(bytes[start] == b'-');
        let whole = digits(&mut at);
        if whole == 0 || (whole > 1 && bytes[at - whole] == b'0') {
            return Err(TextError::Invalid);
        }
        let mut plain = true;
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            plain = false;
            if digits(&mut at) == 0 {
                return Err(TextError::Invalid);
            }
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            at += 1;
            plain = false;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            if digits(&mut at) == 0 {
                return Err(TextError::Invalid);
            }
        }
        self.at = at;
        let text = &self.text[start..at];
        if plain && whole <= 15 && text != "-0" {
            let magnitude = text
                .trim_start_matches('-')
                .bytes()
                .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
            return Ok(JsonValue::Int(if text.starts_with('-') {
                -magnitude
            } else {
                magnitude
            }));
        }
        self.numbers.push(text);
        Ok(JsonValue::Float(f64::NAN))
    }

    fn string(&mut self) -> Result<String, TextError> {
        self.at += 1;
        let bytes = self.text.as_bytes();
        let mut out = String::new();
        loop {
            let run = self.at;
            while bytes
                .get(self.at)
                .is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20)
            {
                self.at += 1;
            }
            out.push_str(&self.text[run..self.at]);
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let from = self.at;
                    let c = self.escape()?;
                    let mut own = String::new();
                    super::json_value::write_string(c.encode_utf8(&mut [0; 4]), &mut own);
                    if own[1..own.len() - 1] != self.text[from..self.at] {
                        self.as_written = false;
                    }
                    out.push(c);
                }
                _ => return Err(TextError::Invalid),
            }
        }
    }

    /// One escape, `\` included; a lone surrogate reads as U+FFFD (what a
    /// JS string with one becomes in the module).
    fn escape(&mut self) -> Result<char, TextError> {
        self.at += 2;
        Ok(match self.text.as_bytes().get(self.at - 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let unit = self.hex4()?;
                if (0xD800..0xDC00).contains(&unit) && self.text[self.at..].starts_with("\\u") {
                    let back = self.at;
                    self.at += 2;
                    let low = self.hex4()?;
                    if (0xDC00..0xE000).contains(&low) {
                        let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        return char::from_u32(c).ok_or(TextError::Invalid);
                    }
                    self.at = back;
                }
                char::from_u32(unit).unwrap_or('\u{FFFD}')
            }
            _ => return Err(TextError::Invalid),
        })
    }

    fn hex4(&mut self) -> Result<u32, TextError> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .ok_or(TextError::Invalid)?;
        let mut n = 0;
        for d in digits.bytes() {
            n = n * 16 + char::from(d).to_digit(16).ok_or(TextError::Invalid)?;
        }
        self.at += 4;
        Ok(n)
    }
}

/// A fingerprint's text of a non-integral number
/// ([`float_text`](super::float_text): what `{:?}` writes) placed from the
/// engine's text of it (`Number.prototype.toString`: the same shortest
/// digits), or `None` where the two could pick different digits (16 or
/// more, or below 1e-307, subnormals among them: the tie `floatText` in `src/web/engine_text.js`
/// settles with the exact digits) or the text is not such a number.
pub fn fingerprint_float_text(js: &str) -> Option<String> {
    use crate::text::Piece;
    let bytes = js.as_bytes();
    let mut out = String::new();
    let mut at = 0;
    if bytes.first() == Some(&b'-') {
        out.push('-');
        at = 1;
    }
    // The significant digits, and the power of ten of the first one.
    let (mut digits, mut e, mut point) = (String::new(), -1i32, false);
    while let Some(&b) = bytes.get(at) {
        at += 1;
        match b {
            b'.' => point = true,
            b'e' => break,
            b'0'..=b'9' => {
                if b != b'0' || !digits.is_empty() {
                    digits.push(char::from(b));
                }
                if digits.is_empty() == point {
                    e += if point { -1 } else { 1 };
                }
            }
            _ => return None,
        }
    }
    let negative = bytes.get(at) == Some(&b'-');
    at += usize::from(matches!(bytes.get(at), Some(b'+' | b'-')));
    let mut exponent = 0i32;
    for &b in &bytes[at.min(bytes.len())..] {
        if !b.is_ascii_digit() || exponent > 999 {
            return None;
        }
        exponent = exponent * 10 + i32::from(b - b'0');
    }
    e += if negative { -exponent } else { exponent };
    while digits.ends_with('0') {
        digits.pop();
    }
    if digits.is_empty() || digits.len() >= 16 || e < -307 {
        return None;
    }
    let zeros = |out: &mut String, n: i32| (0..n).for_each(|_| out.push('0'));
    if !(-4..16).contains(&e) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        i64::from(e).push_to(&mut out);
    } else if e < 0 {
        out.push_str("0.");
        zeros(&mut out, -e - 1);
        out.push_str(&digits);
    } else {
        let point = e as usize + 1;
        if digits.len() <= point {
            out.push_str(&digits);
            zeros(&mut out, (point - digits.len()) as i32);
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::float_text;

    /// The text `Number.prototype.toString` writes for `f` (ECMA-262
    /// Number::toString) from Rust's shortest digits.
    fn js_text(f: f64) -> String {
        let sci = format!("{:e}", f.abs());
        let (m, e) = sci.split_once('e').unwrap();
        let digits = m.replace('.', "");
        let (k, n) = (digits.len() as i32, e.parse::<i32>().unwrap() + 1);
        let sign = if f < 0.0 { "-" } else { "" };
        let body = if k <= n && n <= 21 {
            format!("{digits}{}", "0".repeat((n - k) as usize))
        } else if 0 < n && n <= 21 {
            format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
        } else if -6 < n && n <= 0 {
            format!("0.{}{digits}", "0".repeat(-n as usize))
        } else {
            let rest = if k > 1 {
                format!(".{}", &digits[1..])
            } else {
                String::new()
            };
            let exp = n - 1;
            format!(
                "{}{rest}e{}{exp}",
                &digits[..1],
                if exp > 0 { "+" } else { "" }
            )
        };
        format!("{sign}{body}")
    }

    use crate::protocol::json_value::float_text::text as debug;

    #[test]
    fn reads_what_json_stringify_writes() {
        let text = r#"{"a":[1,-2,0,123456789012345,true,false,null],"b":{"c":"x\"\\\n\r\t\u0001é😀"},"d":[]}"#;
        let read = read_json_text(text, 64).unwrap();
        assert!(read.as_written);
        assert!(read.numbers.is_empty());
        let expected: JsonValue = serde_json::from_str(text).unwrap();
        assert_eq!(read.value, expected);
        assert_eq!(read.value.to_json_text(float_text), text);
    }

    #[test]
    fn leaves_every_other_number_as_text_in_order_and_fills_it() {
        let text = r#"[1.5,{"x":-2.5e-7,"y":1234567890123456},1e+21,-0]"#;
        let read = read_json_text(text, 64).unwrap();
        assert_eq!(
            read.numbers,
            ["1.5", "-2.5e-7", "1234567890123456", "1e+21", "-0"]
        );
        let value = read.fill(&[1.5, -2.5e-7, 1234567890123456.0, 1e21, -0.0]);
        let expected = JsonValue::Array(vec![
            JsonValue::Float(1.5),
            JsonValue::Object(vec![
                ("x".into(), JsonValue::Float(-2.5e-7)),
                ("y".into(), JsonValue::Int(1234567890123456)),
            ]),
            JsonValue::Float(1e21),
            JsonValue::Int(0),
        ]);
        assert_eq!(value, expected);
    }

    #[test]
    fn says_where_its_own_text_would_differ() {
        for (text, as_written) in [
            (r#""\u0008""#, true),
            (r#""\b""#, false),
            (r#""\f""#, false),
            (r#""\/""#, false),
            (r#""\u000a""#, false),
            (r#""\u0041""#, false),
            (r#""\u001F""#, false),
            (r#""\u001f""#, true),
            (r#""\ud83d\ude00""#, false),
            (r#"[1, 2]"#, false),
            (r#""é""#, true),
        ] {
            let read = read_json_text(text, 64).unwrap();
            assert_eq!(read.as_written, as_written, "{text}");
            if as_written {
                assert_eq!(read.value.to_json_text(float_text), text);
            }
        }
        // A lone surrogate is U+FFFD, as a JS string with one becomes in the module.
        for text in [r#""\ud800""#, r#""\udc00x""#, r#""\ud800\u0041""#] {
            let read = read_json_text(text, 64).unwrap();
            assert!(!read.as_written);
            assert!(
                read.value.as_str().unwrap().starts_with('\u{FFFD}'),
                "{text}"
            );
        }
        let pair = read_json_text(r#""\ud83d\ude00""#, 64).unwrap();
        assert_eq!(pair.value.as_str(), Some("😀"));
    }

    #[test]
    fn refuses_what_is_not_json_and_nesting_beyond_the_limit() {
        for text in [
            "",
            "[",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "1e",
            "-",
            "tru",
            "\"a",
            "\"\u{1}\"",
            "[1] x",
            "{1:2}",
            "\"\\x\"",
            "\"\\u12\"",
        ] {
            assert_eq!(
                read_json_text(text, 64).unwrap_err(),
                TextError::Invalid,
                "{text:?}"
            );
        }
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(read_json_text(&nested(3), 3).is_ok());
        assert_eq!(
            read_json_text(&nested(4), 3).unwrap_err(),
            TextError::TooDeep
        );
        assert_eq!(
            read_json_text("{\"a\":{\"b\":{\"c\":{}}}}", 3).unwrap_err(),
            TextError::TooDeep
        );
    }

    #[test]
    fn places_the_fingerprint_text_from_the_engines_digits() {
        let mut values = vec![
            0.1,
            -0.5,
            1.5e-7,
            -2.5e22,
            1e15 + 0.5,
            123.456,
            1e-4,
            9.99e-5,
            1e16,
            1.25e16,
            5e-324 * 3.0,
            1e21,
            1.7976931348623157e308,
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = f64::from_bits(x);
            if f.is_finite() && f.fract() != 0.0 || f.abs() > 9e15 && f.is_finite() {
                values.push(f);
            }
            // Short decimals too, as bodies hold them.
            values.push((x % 1_000_000) as f64 / 1000.0 - 500.0);
        }
        let mut placed = 0;
        for f in values {
            if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
                continue;
            }
            match fingerprint_float_text(&js_text(f)) {
                Some(text) => {
                    assert_eq!(text, debug(f), "{f:e} from {}", js_text(f));
                    placed += 1;
                }
                None => {
                    let digits = format!("{:e}", f.abs())
                        .split('e')
                        .next()
                        .unwrap()
                        .replace('.', "")
                        .len();
                    assert!(digits >= 16 || f.abs() < 1e-307, "{f:e} left to the engine");
                }
            }
        }
        assert!(placed > 90_000, "{placed}");
        assert_eq!(fingerprint_float_text("abc"), None);
        assert_eq!(fingerprint_float_text("1e+x"), None);
    }
}
