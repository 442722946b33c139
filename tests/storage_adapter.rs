//! Adapter storage and the in-memory store, in every JS runtime (Node too:
//! the adapter needs nothing from a browser).
#![allow(clippy::disallowed_macros)] // a test: format! is allowed here (clippy.toml)
#![cfg(target_arch = "wasm32")]

mod support;

use support::*;
use wasm_bindgen_test::*;
use wow_command_client::core::journal::{
    IntentRecord, Listing, RecordError, RecordStore, StoreError, Unavailable,
};
use wow_command_client::web::storage::AnyStore;

#[wasm_bindgen_test]
async fn adapters_meet_the_contract_with_and_without_compare_and_set() {
    for atomic in [false, true] {
        let adapter = memory_adapter(atomic);
        store_contract(|ns| AnyStore::open(&adapter, ns).unwrap()).await;
    }
}

#[wasm_bindgen_test]
async fn a_failing_adapter_refuses_before_sending() {
    for (name, kind) in [
        ("QuotaExceededError", Unavailable::QuotaExceeded),
        ("SecurityError", Unavailable::Blocked),
        ("TypeError", Unavailable::WriteFailed),
    ] {
        let store = AnyStore::open(&failing_adapter(name), "ns").unwrap();
        let err = store
            .put(&made("ns", intent(None, "a"), 2))
            .await
            .unwrap_err();
        match err {
            StoreError::Unavailable { kind: got, detail } => {
                assert_eq!(got, kind);
                assert!(detail.starts_with(name), "{detail}");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[wasm_bindgen_test]
async fn corrupt_adapter_records_are_quarantined_and_reported() {
    let adapter = memory_adapter(false);
    let ns = unique("q");
    adapter_raw_set(&adapter, &format!("wow-intents/{ns}/bad"), "{not json");
    let store = AnyStore::open(&adapter, &ns).unwrap();
    written(&store, &ns, intent(None, "a"), 4).await;
    let listing: Listing<IntentRecord> = store.list(&ns).await.unwrap();
    assert_eq!(listing.records.len(), 1);
    assert_eq!(listing.quarantined.len(), 1);
    assert_eq!(listing.quarantined[0].key, format!("wow-intents/{ns}/bad"));
    assert!(adapter_raw_has(
        &adapter,
        &format!("wow-intents-quarantine/{ns}/bad")
    ));
    assert!(!adapter_raw_has(&adapter, &format!("wow-intents/{ns}/bad")));
    // Kept as the client's executor keeps it (one store path): what was
    // found, and why it was moved.
    let kept = adapter_raw_get(&adapter, &format!("wow-intents-quarantine/{ns}/bad")).unwrap();
    let kept = js_sys::JSON::parse(&kept).unwrap();
    let field = |name: &str| {
        js_sys::Reflect::get(&kept, &name.into())
            .unwrap()
            .as_string()
    };
    assert_eq!(field("value").as_deref(), Some("{not json"));
    let why = field("quarantinedFor").expect("kept with why");
    // Still reported on the next listing, with why: never dropped silently.
    let listing: Listing<IntentRecord> = store.list(&ns).await.unwrap();
    assert_eq!(listing.quarantined.len(), 1);
    assert_eq!(listing.quarantined[0].reason, RecordError::Corrupt(why));
    // A record written by a newer build is reported but left where it is.
    adapter_raw_set(
        &adapter,
        &format!("wow-intents/{ns}/future"),
        r#"{"schemaVersion":7}"#,
    );
    let listing: Listing<IntentRecord> = store.list(&ns).await.unwrap();
    assert!(listing
        .quarantined
        .iter()
        .any(|q| q.key.ends_with("/future")));
    assert!(adapter_raw_has(
        &adapter,
        &format!("wow-intents/{ns}/future")
    ));
}

/// The contract's optional parts, as IndexedDB's object uses them: each
/// write says whether it must be durable before it resolves (an unresolved
/// intent's must), and a batch of deletes is one `deleteMany`.
#[wasm_bindgen_test]
async fn an_adapter_is_told_what_to_flush_and_deletes_in_one_batch() {
    let adapter = recording_adapter();
    let ns = unique("batch");
    let store = AnyStore::open(&adapter, &ns).unwrap();
    for i in 0..3 {
        written(&store, &ns, intent(None, &format!("a{i}")), i).await;
    }
    assert_eq!(adapter_calls(&adapter), "cas:true,cas:true,cas:true");
    assert_eq!(cleared(&store, &ns).await, 3);
    assert_eq!(
        adapter_calls(&adapter),
        "cas:true,cas:true,cas:true,deleteMany:3"
    );
    assert!(listed(&store, &ns).await.is_empty());
}

/// Only the built-in stores hand records back as objects: a caller's
/// adapter that answers anything but a string is refused, and what it
/// holds is left where it is, not read as a damaged record and moved aside.
#[wasm_bindgen_test]
async fn a_caller_adapter_answering_objects_is_refused_and_nothing_is_moved() {
    let adapter = object_answering_adapter();
    let ns = unique("objects");
    let store = AnyStore::open(&adapter, &ns).unwrap();
    let record = written(&store, &ns, intent(None, "a"), 6).await;
    let key = format!("wow-intents/{ns}/{}", record.intent_id);
    let err = RecordStore::<IntentRecord>::list(&store, &ns)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Unavailable {
                kind: Unavailable::ReadFailed,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(adapter_raw_has(&adapter, &key));
    assert!(!adapter_raw_has(
        &adapter,
        &format!("wow-intents-quarantine/{ns}/{}", record.intent_id)
    ));
}

#[wasm_bindgen_test]
async fn memory_storage_is_an_explicit_opt_in_that_a_reload_forgets() {
    let store = AnyStore::open(&"memory".into(), "ns").unwrap();
    let record = written(&store, "ns", intent(Some("k"), "a"), 5).await;
    let found: Option<IntentRecord> = store.get("ns", &record.intent_id).await.unwrap();
    assert!(found.is_some());
    let reloaded = AnyStore::open(&"memory".into(), "ns").unwrap();
    let found: Option<IntentRecord> = reloaded.get("ns", &record.intent_id).await.unwrap();
    assert!(found.is_none());
}

#[wasm_bindgen::prelude::wasm_bindgen(inline_js = r#"
export function crossingSample() {
  return { a: [1, -0, 2.5, 9007199254740991, 9007199254740992, 1e300, -3], s: "é😀\n", n: null, u: undefined,
    t: true, f: false, o: { z: 1, y: [{}, []] } };
}
export function withFunction() { return { ok: 1, f() {} }; }
export function nested(n) { return JSON.parse("[".repeat(n) + "]".repeat(n)); }
export function jsonOf(value) { return JSON.stringify(value); }
"#)]
extern "C" {
    #[wasm_bindgen(js_name = crossingSample)]
    fn crossing_sample() -> wasm_bindgen::JsValue;
    #[wasm_bindgen(js_name = withFunction)]
    fn with_function() -> wasm_bindgen::JsValue;
    #[wasm_bindgen(js_name = jsonOf)]
    fn json_of(value: &wasm_bindgen::JsValue) -> String;
    fn nested(n: u32) -> wasm_bindgen::JsValue;
}

/// JS values cross into Rust through the crate's own walker (`json_from_js`)
/// and back as JSON text the engine parses (`to_js`): integers stay exact
/// up to 2^53 - 1, other numbers are floats, `undefined` is null, key order
/// is kept, and a function or a nesting deeper than MAX_NESTING is refused
/// (a hostile answer must not exhaust the stack: in wasm that traps).
#[wasm_bindgen_test]
fn values_cross_the_boundary_both_ways_as_json() {
    use wow_command_client::core::protocol::JsonValue as J;
    use wow_command_client::web::{json_from_js, to_js};
    let read = json_from_js(crossing_sample()).unwrap();
    let s = |v: &str| J::String(v.to_owned());
    let expected = J::Object(vec![
        (
            "a".into(),
            J::Array(vec![
                J::Int(1),
                J::Int(0),
                J::Float(2.5),
                J::Int(9007199254740991),
                J::Float(9007199254740992.0),
                J::Float(1e300),
                J::Int(-3),
            ]),
        ),
        ("s".into(), s("é😀\n")),
        ("n".into(), J::Null),
        ("u".into(), J::Null),
        ("t".into(), J::Bool(true)),
        ("f".into(), J::Bool(false)),
        (
            "o".into(),
            J::Object(vec![
                ("z".into(), J::Int(1)),
                (
                    "y".into(),
                    J::Array(vec![J::Object(vec![]), J::Array(vec![])]),
                ),
            ]),
        ),
    ]);
    assert_eq!(read, expected);
    assert_eq!(
        json_of(&to_js(&read)),
        r#"{"a":[1,0,2.5,9007199254740991,9007199254740992,1e+300,-3],"s":"é😀\n","n":null,"u":null,"t":true,"f":false,"o":{"z":1,"y":[{},[]]}}"#
    );
    assert_eq!(
        json_from_js(with_function()).unwrap_err().message,
        "not a JSON value"
    );
}

/// The deepest value JSON crosses with (MAX_NESTING levels: a body's
/// `maxBodyDepth` is at most that, an answer is read with it) is walked in
/// and written back out in every engine and in Node, in this unoptimised
/// build too, whose frames are the largest; one level more is refused,
/// not a trap.
#[wasm_bindgen_test]
fn the_deepest_value_allowed_crosses_in_every_engine() {
    use wow_command_client::core::protocol::MAX_NESTING;
    use wow_command_client::web::{json_from_js, to_js};
    let deepest = json_from_js(nested(MAX_NESTING)).unwrap();
    assert_eq!(json_of(&to_js(&deepest)).len(), 2 * MAX_NESTING as usize);
    assert!(json_from_js(nested(MAX_NESTING + 1)).is_err());
}

/// The fingerprints' float text the engine writes (`floatText` in
/// engine_text.js, from its own digits) is Rust's own text (`float_text`,
/// compiled into this test, not into the shipped module): in Node and in
/// each browser engine, over edge cases, a spread, ties, and every scale.
#[wasm_bindgen_test]
fn the_engines_float_digits_write_the_fingerprints_text() {
    use wow_command_client::core::protocol::float_text;
    let mut values = vec![
        0.1,
        0.2 + 0.1,
        -0.0,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        1e21,
        -1e-7,
        123.456,
        std::f64::consts::PI,
        1e16 - 2.0,
        9.999e-5,
        1e-4,
        1e15 + 0.5,
        9_007_199_254_740_992.0,
        -2.5e22,
    ];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        values.push(f64::from_bits(x));
    }
    // Ties, where engines keep the even candidate and Rust's writer the upper.
    for k in 0..2_000u64 {
        values.push((1_000_000_000_000_000 + k * 104_729) as f64 + 0.25);
        values.push(-((1_000_000_000_000_000 + k * 7_919) as f64 + 0.75));
    }
    // Every scale, long digits and short ones (prices, ratios), subnormals too.
    for scale in -330..310 {
        values.push(1.234_567_890_123_4 * 10f64.powi(scale));
        for n in [1u64, 5, 25, 1234, 99_999, 123_456_789, 999_999_999_999_999] {
            values.push(n as f64 * 10f64.powi(scale));
            values.push(n as f64 / 100.0 * 10f64.powi(scale));
        }
    }
    values.extend([
        1.5,
        -0.5,
        1e16,
        1.5e16,
        9.999_999_999_999_998e15,
        1e-5,
        1.5e-7,
    ]);
    values.extend([
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(0x4317_9085_685d_83c9),
    ]);
    let negated: Vec<f64> = values.iter().map(|f| -f).collect();
    values.extend(negated);
    for f in values {
        let (mut engine, mut rust) = (String::new(), String::new());
        wow_command_client::web::float_text(f, &mut engine);
        float_text(f, &mut rust);
        assert_eq!(engine, rust, "bits {:#x}", f.to_bits());
    }
}

/// The times a message names, written by the engine's `Date` (`isoTime` in
/// engine_text.js), are the core's own text (`iso8601`, compiled into this
/// test, not into the shipped module) over the years 1970 to 9999.
#[wasm_bindgen_test]
fn the_engines_time_text_is_the_cores() {
    use wow_command_client::core::machine::probe::iso8601;
    let mut values = vec![
        0,
        1,
        999,
        1_000,
        951_782_400_001,
        1_796_428_744_270,
        253_402_300_799_999,
    ];
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..5_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        values.push((x % 253_402_300_800_000) as i64);
    }
    for ms in values {
        assert_eq!(wow_command_client::web::iso_time(ms), iso8601(ms), "{ms}");
    }
}

/// A caller's body read from the text `JSON.stringify` makes of it
/// (`caller_body`, what `send` reads) is what walking the value made
/// (`caller_json`): the same value, the same JSON text sent and stored, the
/// same fingerprint, the same refusals; over random values with every
/// kind of string escape, lone surrogates, numbers at every scale, integers
/// beyond 2^53, `-0`, and keys such as `__proto__`. In Node and each engine.
#[wasm_bindgen_test]
fn a_body_read_from_its_text_is_the_walked_body() {
    use wasm_bindgen::JsValue;
    use wow_command_client::core::journal::fingerprint::fingerprint_by;
    use wow_command_client::core::protocol::{JsonLimits, JsonOut, JsonValue};
    use wow_command_client::web::{caller_body, caller_json, engine_number_text, float_text};
    let make = js_sys::Function::new_with_args(
        "seed",
        r#"
        let x = seed >>> 0 || 1;
        const r = () => ((x ^= x << 13, x ^= x >>> 17, x ^= x << 5) >>> 0) / 4294967296;
        const pick = (a) => a[Math.floor(r() * a.length)];
        const chars = ["a", "é", "😀", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\u0001", "\u001f", "\u007f",
          "\u2028", "/", "\ud800", "\udfff", "\ud83d", "\ude00", "<", " "];
        const str = () => Array.from({ length: Math.floor(r() * 6) }, () => pick(chars)).join("");
        const num = () => pick([
          () => Math.floor(r() * 2000) - 1000, () => (r() - 0.5) * 10 ** Math.floor(r() * 60 - 30),
          () => Math.round(r() * 1e6) / 100, () => 2 ** 53 + Math.floor(r() * 1e6), () => -0, () => 1e21,
          () => Number.MAX_VALUE, () => 5e-324 * Math.floor(r() * 9 + 1), () => 123456789012345,
          () => 1234567890123456, () => -(2 ** 53 - 1), () => 0.1 + 0.2, () => NaN, () => Infinity]) ();
        const value = (d) => {
          const k = r();
          if (d > 4 || k < 0.3) return pick([str, num, num, () => true, () => false, () => null])();
          if (k < 0.6) return Array.from({ length: Math.floor(r() * 5) }, () => value(d + 1));
          const o = {};
          for (let i = Math.floor(r() * 5); i > 0; i--) o[pick([str(), "__proto__", "1", "constructor", "b"])] = value(d + 1);
          if (r() < 0.1) Object.defineProperty(o, "__proto__", { value: value(d + 1), enumerable: true });
          if (r() < 0.1) o.skipped = undefined;
          return o;
        };
        return value(0);
        "#,
    );
    let limits = JsonLimits::default();
    let fingerprint = |value: &JsonValue, placed: &dyn Fn(f64) -> Option<String>| {
        fingerprint_by(
            &[value],
            &|f, out: &mut String| match placed(f) {
                Some(text) => out.push_str(&text),
                None => float_text(f, out),
            },
            0,
        )
    };
    for seed in 1..3_000u32 {
        let v = make.call1(&JsValue::NULL, &seed.into()).unwrap();
        let walked = caller_json(&v, "command.body", limits).unwrap();
        let body = caller_body(&v, "command.body", limits).unwrap();
        assert_eq!(body.value(), &walked, "seed {seed}");
        assert_eq!(
            JsonOut::of(&body, engine_number_text),
            JsonOut::of(&walked, engine_number_text),
            "seed {seed}"
        );
        assert_eq!(
            fingerprint(body.value(), &|f| body.float_text(f).map(str::to_owned)),
            fingerprint(&walked, &|_| None),
            "seed {seed}"
        );
    }
    let refused = js_sys::Function::new_no_args(
        r#"
        const cycle = {}; cycle.self = cycle;
        let deep = []; for (let i = 0; i < 70; i++) deep = [deep];
        let deepObject = {}; for (let i = 0; i < 70; i++) deepObject = { a: deepObject };
        return [cycle, 10n, deep, deepObject, "x".repeat(1 << 20), undefined, () => 1];
        "#,
    )
    .call0(&JsValue::NULL)
    .unwrap();
    for v in js_sys::Array::from(&refused).iter() {
        assert_eq!(
            caller_body(&v, "command.body", limits).err(),
            caller_json(&v, "command.body", limits).err()
        );
    }
}
