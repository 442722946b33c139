//! The golden fixtures (`tests/fixtures/golden/v*/`, written by earlier
//! builds in an engine: `scripts/golden-fixtures.mjs`), read natively by
//! the core: the derivations give the pinned requestIds and fingerprints,
//! every stored record reads and writes back to the very text (or object) it
//! was stored as, and damaged entries are refused the way the store moves
//! them aside. That the client replays, re-sends and resumes what the
//! fixtures say is checked where users meet it, through the package in each
//! engine and in Node (`tests/golden/golden.test.mjs`).
//! Values are read as JavaScript holds them (`JsonValue::from_js_number`):
//! what the engines fingerprinted and stored.

use std::path::PathBuf;

use crate::consumer::EffectRecord;
use crate::journal::*;
use crate::protocol::{FromJson, JsonOut, JsonValue};

/// The fixture folders, oldest first.
fn versions() -> Vec<(String, PathBuf)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/golden");
    let mut found: Vec<(u32, String, PathBuf)> = std::fs::read_dir(&root)
        .expect("tests/fixtures/golden is there")
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            Some((name.strip_prefix('v')?.parse().ok()?, name, e.path()))
        })
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no golden fixtures");
    found.into_iter().map(|(_, n, p)| (n, p)).collect()
}

/// A fixture file, keys in their order, numbers as JavaScript read them.
fn read(dir: &std::path::Path, file: &str) -> JsonValue {
    json(&std::fs::read_to_string(dir.join(file)).expect("fixture"))
}

fn json(text: &str) -> JsonValue {
    as_js_holds_it(serde_json::from_str(&lone_surrogates_replaced(text)).expect("JSON"))
}

/// JSON text whose `\uD800`–`\uDFFF` escapes that are not a pair are
/// U+FFFD: what a JS string's lone surrogate is once it crosses into Rust
/// (the engine's UTF-8 encoder replaces it). Pairs are kept.
fn lone_surrogates_replaced(text: &str) -> String {
    let unit = |at: usize| {
        let hex = text.get(at..at + 6)?.strip_prefix("\\u")?;
        u16::from_str_radix(hex, 16).ok()
    };
    let (mut out, mut i) = (String::with_capacity(text.len()), 0);
    while let Some(c) = text[i..].chars().next() {
        let step = match (c, unit(i)) {
            ('\\', Some(u))
                if (0xD800..0xDC00).contains(&u)
                    && unit(i + 6).is_some_and(|l| (0xDC00..0xE000).contains(&l)) =>
            {
                12
            }
            ('\\', Some(u)) if (0xD800..0xE000).contains(&u) => {
                out.push_str("\\ufffd");
                i += 6;
                continue;
            }
            ('\\', _) => 2,
            _ => c.len_utf8(),
        };
        out.push_str(&text[i..i + step]);
        i += step;
    }
    out
}

fn as_js_holds_it(v: JsonValue) -> JsonValue {
    match v {
        JsonValue::Int(i) => JsonValue::from_js_number(i as f64),
        JsonValue::UInt(u) => JsonValue::from_js_number(u as f64),
        JsonValue::Float(f) => JsonValue::from_js_number(f),
        JsonValue::Array(items) => {
            JsonValue::Array(items.into_iter().map(as_js_holds_it).collect())
        }
        JsonValue::Object(entries) => JsonValue::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k, as_js_holds_it(v)))
                .collect(),
        ),
        other => other,
    }
}

fn items(v: &JsonValue) -> &[JsonValue] {
    match v {
        JsonValue::Array(items) => items,
        other => panic!("not an array: {other:?}"),
    }
}

fn text(v: &JsonValue, key: &str) -> String {
    v.get(key)
        .and_then(JsonValue::as_str)
        .unwrap_or_else(|| panic!("no string `{key}`"))
        .to_owned()
}

/// What `Number.prototype.toString` writes (ECMAScript Number::toString,
/// radix 10): how the engines wrote the stored records' numbers.
fn js_number_text(f: f64, out: &mut String) {
    if f == 0.0 {
        out.push('0');
        return;
    }
    let exp = format!("{:e}", f.abs());
    let (mantissa, e) = exp.split_once('e').unwrap();
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let (k, n) = (digits.len() as i32, e.parse::<i32>().unwrap() + 1);
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n - 1 < 0 { '-' } else { '+' });
        out.push_str(&(n - 1).abs().to_string());
    }
}

#[test]
fn js_number_text_is_what_engines_write() {
    for (f, js) in [
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (1.2345678901234568e20, "123456789012345680000"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (-2.5, "-2.5"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
    ] {
        let mut out = String::new();
        js_number_text(f, &mut out);
        assert_eq!(out, js, "{f:e}");
    }
}

/// A stored record as the web layer reads it: its `schemaVersion` first
/// (a newer build's record is never decoded), then its fields.
fn decode<R: StoredRecord>(value: &JsonValue) -> Result<R, RecordError> {
    if !matches!(value, JsonValue::Object(_)) {
        return Err(RecordError::Corrupt("not an object".into()));
    }
    let version = value.get("schemaVersion").and_then(JsonValue::as_i64);
    R::check_schema(version.and_then(|v| u64::try_from(v).ok()))?;
    R::from_json(value.clone()).map_err(|e| RecordError::Corrupt(e.message()))
}

#[test]
fn derived_request_ids_are_the_pinned_ones() {
    for (v, dir) in versions() {
        for (i, pinned) in items(&read(&dir, "request-ids.json")).iter().enumerate() {
            let (ns, key) = (text(pinned, "namespace"), text(pinned, "intentKey"));
            assert_eq!(
                derived_request_id(&ns, &key),
                text(pinned, "requestId"),
                "{v}/request-ids.json #{i}: ({ns:?}, {key:?})"
            );
            assert_eq!(
                derived_request_id(&ns, &format!("{key}\u{0}aggregate")),
                text(pinned, "aggregateId"),
                "{v}/request-ids.json #{i}: a keyed create's aggregate id"
            );
        }
    }
}

/// The intent a caller's command of a fixture makes, as the client builds it
/// from what the record stored of it (method, path, version; the body as
/// given, `null` being "no body", `{}`; the aggregate id as given).
fn new_intent(key: &str, caller: &JsonValue, body: JsonValue, stored: &JsonValue) -> NewIntent {
    let aggregate = stored.get("aggregate").expect("aggregate");
    let command = stored.get("command").expect("command");
    let mut aggregate = AggregateIdentity::from_json(aggregate.clone()).expect("aggregate");
    aggregate.aggregate_id = caller
        .get("aggregate")
        .and_then(|a| a.get("id"))
        .and_then(JsonValue::as_str)
        .unwrap_or_default()
        .to_owned();
    NewIntent {
        scope: None,
        intent_key: Some(key.to_owned()),
        aggregate,
        command: CommandSpec {
            method: text(command, "method"),
            path: text(command, "path"),
            body: if body == JsonValue::Null {
                JsonValue::empty_object()
            } else {
                body
            }
            .into(),
            expected_version: command.get("expectedVersion").and_then(JsonValue::as_i64),
            create: command.get("create") == Some(&JsonValue::Bool(true)),
            ..CommandSpec::default()
        },
    }
}

#[test]
fn fingerprints_are_the_pinned_ones() {
    for (v, dir) in versions() {
        let file = read(&dir, "fingerprints.json");
        let namespace = text(&file, "namespace");
        for case in items(file.get("cases").unwrap()) {
            let name = text(case, "name");
            let body = json(&text(case, "body"));
            let intent = new_intent(
                &text(case, "intentKey"),
                case.get("command").unwrap(),
                body,
                case.get("stored").unwrap(),
            );
            // Made as the engine makes a new intent's record (the core's
            // own number text: tests/golden/ checks the engines' in each).
            let policy = RequestIdPolicy::default();
            let (record, _) = crate::journal::tests::made_with(&namespace, policy, 0, intent, 1);
            assert_eq!(
                record.fingerprint,
                text(case, "fingerprint"),
                "{v}/fingerprints.json case {name:?}: the payload fingerprint earlier builds stored"
            );
        }
    }
}

/// The store fixtures of a version, by file name.
fn stores(dir: &std::path::Path) -> Vec<(String, JsonValue)> {
    ["indexed-db.json", "local-storage.json", "adapter.json"]
        .into_iter()
        .map(|f| (f.to_owned(), read(dir, f)))
        .collect()
}

/// Every entry of a dump as (area, id, stored value): text stores' values
/// are their JSON text, IndexedDB's the objects it keeps.
fn entries(store: &JsonValue) -> Vec<(String, String, JsonValue)> {
    let namespace = text(store, "namespace");
    let mut out = Vec::new();
    if let Some(JsonValue::Object(stores)) = store.get("stores") {
        for (name, list) in stores {
            for pair in items(list) {
                let pair = items(pair);
                let id = pair[0].as_str().unwrap().to_owned();
                out.push((name.clone(), id, pair[1].clone()));
            }
        }
        return out;
    }
    for pair in items(store.get("entries").unwrap()) {
        let pair = items(pair);
        let key = pair[0].as_str().unwrap();
        let rest = key.strip_prefix("wow-").unwrap();
        let (area, id) = rest.split_once('/').unwrap();
        let id = id.strip_prefix(&format!("{namespace}/")).unwrap();
        out.push((area.to_owned(), id.to_owned(), pair[1].clone()));
    }
    out
}

#[test]
fn stored_records_read_and_write_back_as_they_were_stored() {
    for (v, dir) in versions() {
        for (file, fixture) in stores(&dir) {
            let store = fixture.get("store").unwrap();
            let damaged: Vec<(String, String)> = items(fixture.get("damaged").unwrap())
                .iter()
                .map(|d| (text(d, "id"), text(d, "expect")))
                .collect();
            let mut read = 0;
            for (area, id, stored) in entries(store) {
                let at = format!("{v}/{file} {area}/{id}");
                let value = match &stored {
                    JsonValue::String(s) => serde_json::from_str::<JsonValue>(s)
                        .map(as_js_holds_it)
                        .unwrap_or(JsonValue::String("not JSON".into())),
                    object => object.clone(),
                };
                let expect = damaged
                    .iter()
                    .find(|(d, _)| *d == id)
                    .map(|(_, e)| e.as_str());
                let written = match area.as_str() {
                    "intents" => {
                        decode::<IntentRecord>(&value).map(|r| r.stored_text(js_number_text))
                    }
                    "effects" => {
                        decode::<EffectRecord>(&value).map(|r| JsonOut::of(&r, js_number_text))
                    }
                    // Moved aside by an earlier build: not a record any more.
                    _ => continue,
                };
                match (expect, written) {
                    (None, Ok(written)) => {
                        read += 1;
                        match &stored {
                            JsonValue::String(s) => assert_eq!(&written, s, "{at}: its text"),
                            object => assert_eq!(&json(&written), object, "{at}: its object"),
                        }
                    }
                    (Some("quarantined"), Err(RecordError::Corrupt(_))) => {}
                    (Some("untouched"), Err(RecordError::FutureSchema(_))) => {}
                    (expect, got) => panic!("{at}: expected {expect:?}, read {got:?}"),
                }
            }
            assert!(read >= 10, "{v}/{file}: only {read} records read");
        }
    }
}
