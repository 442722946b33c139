//! One field list per wire type: what the module writes for each value that
//! crosses to JS or to storage (the intent record and its parts, the
//! CommandResult, the outcome, the effect record, the telemetry events and
//! the announcement `subscribe` delivers),
//! pinned in `tests/api/wire-fields.json`. The `.d.ts` is checked against
//! the same file (`tests/api/wire-fields.mjs`, run by `scripts/check-api.sh`),
//! so a field the writer adds, drops or makes optional fails `npm test`
//! until both the file and the declaration say it. After an intended change:
//! `WOW_ACCEPT=1 cargo test -p wow-command-core --lib wire_fields`.
//!
//! Each type is written twice by its writer (what the module ships; for the
//! plain objects, the one `wire_object!` list makes the struct, its writer
//! and its reader): with every optional part present and with every one absent. A
//! field in the first and not the second is optional (`name?` in the file).
//! The samples are struct literals, so a new field does not compile until
//! it is given here; the full sample must write what the serde derive (the
//! struct's own field list) writes, and the hand-written reader must read
//! both samples back whole.
//!
//! The types with a `wire_object!` list are declared from it: each field's
//! doc, JSON name and TypeScript type (its Rust type's [`TsType`]; optional
//! where its writer may leave it out), written to `src/js/wire_types.rs`,
//! which the `.d.ts` takes as it is.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::consumer::{EffectRecord, EffectState};
use crate::engine::events::{self, Detail};
use crate::journal::{
    AggregateIdentity, Attempt, AttemptOutcome, Body, CommandSpec, IntentRecord, IntentState,
    WaitEnd, WaitSpec,
};
use crate::machine::outcome::{Outcome, Status};
use crate::machine::Availability;
use crate::protocol::{
    float_text, BindingError, CommandResult, CommandStage, ErrorCode, ErrorInfo, FromJson,
    FunctionInfo, FunctionKind, JsonOut, JsonValue, ToJson,
};

fn written(value: &impl ToJson) -> Value {
    serde_json::from_str(&JsonOut::of(value, float_text)).expect("the writer writes JSON")
}

fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect()
}

/// `full`'s fields, `name?` for those `min` leaves out.
fn fields(full: &Value, min: &Value) -> Vec<String> {
    let (all, always) = (keys(full), keys(min));
    assert!(
        always.is_subset(&all),
        "the empty sample writes no field the full one lacks"
    );
    all.iter()
        .map(|k| {
            if always.contains(k) {
                k.clone()
            } else {
                format!("{k}?")
            }
        })
        .collect()
}

/// The full sample writes every field of the struct: what its derive writes.
fn complete<T: ToJson + serde::Serialize>(full: &T) -> Value {
    let ours = written(full);
    let derived = serde_json::to_value(full).unwrap();
    assert_eq!(
        keys(&ours),
        keys(&derived),
        "the full sample sets every field"
    );
    ours
}

/// [`complete`], and the reader reads every field back, full and empty.
fn read_back<T: ToJson + FromJson + serde::Serialize + PartialEq + std::fmt::Debug>(
    full: &T,
    min: &T,
) -> (Value, Value) {
    for sample in [full, min] {
        let value: JsonValue = serde_json::from_str(&JsonOut::of(sample, float_text)).unwrap();
        assert_eq!(
            &T::from_json(value).unwrap(),
            sample,
            "the reader reads what was written"
        );
    }
    (complete(full), written(min))
}

fn aggregate(full: bool) -> AggregateIdentity {
    AggregateIdentity {
        context_alias: full.then(|| "ctx".into()),
        resource: "account".into(),
        tenant_id: full.then(|| "t".into()),
        owner_id: full.then(|| "o".into()),
        aggregate_id: "a-1".into(),
    }
}

fn wait(full: bool) -> WaitSpec {
    WaitSpec {
        stage: CommandStage::SagaHandled,
        context: full.then(|| "c".into()),
        processor: full.then(|| "p".into()),
        function: full.then(|| "f".into()),
        tail_stage: full.then_some(CommandStage::Processed),
        timeout_ms: 30_000,
    }
}

fn command(full: bool) -> CommandSpec {
    CommandSpec {
        method: "POST".into(),
        path: "/account/a-1/lock_amount".into(),
        body: Body::new(JsonValue::Int(1)),
        expected_version: full.then_some(4),
        create: full,
        wait: wait(full),
        headers: if full {
            vec![("Command-Header-x".into(), "1".into())]
        } else {
            Vec::new()
        },
    }
}

fn attempt(full: bool) -> Attempt {
    Attempt {
        number: 1,
        sent_at: 1_000,
        command_id: full.then(|| "0V3o".into()),
        ended_at: full.then_some(2_000),
        outcome: full.then(|| AttemptOutcome::Unknown("timeout".into())),
        caller_deadline: full.then_some(1_500),
        wait_ended_by: full.then_some(WaitEnd::Timeout),
    }
}

fn function() -> FunctionInfo {
    FunctionInfo::new(FunctionKind::Command, "bank", "Account", "onCommand")
}

fn binding_error() -> BindingError {
    BindingError {
        name: "amount".into(),
        msg: "must be positive".into(),
    }
}

fn result(full: bool) -> CommandResult {
    CommandResult {
        id: "s-1".into(),
        wait_command_id: "c-1".into(),
        stage: CommandStage::Processed,
        context_name: "bank".into(),
        aggregate_name: "account".into(),
        tenant_id: "(0)".into(),
        aggregate_id: "a-1".into(),
        aggregate_version: full.then_some(2),
        request_id: "r-1".into(),
        command_id: "c-1".into(),
        function: function(),
        error_code: ErrorCode::parse("Ok"),
        error_msg: String::new(),
        binding_errors: if full {
            vec![binding_error()]
        } else {
            Vec::new()
        },
        result: JsonValue::Object(Vec::new()),
        signal_time: 3_000,
        succeeded: full.then_some(true),
    }
}

fn error(full: bool) -> ErrorInfo {
    ErrorInfo {
        error_code: ErrorCode::parse("IllegalArgument"),
        error_msg: "no".into(),
        binding_errors: if full {
            vec![binding_error()]
        } else {
            Vec::new()
        },
        succeeded: full.then_some(false),
    }
}

fn record(full: bool) -> IntentRecord {
    IntentRecord {
        schema_version: crate::journal::record::SCHEMA_VERSION,
        namespace: "n".into(),
        user: full.then(|| "u".into()),
        intent_id: "i-1".into(),
        intent_key: full.then(|| "k".into()),
        request_id: "r-1".into(),
        aggregate: aggregate(full),
        command: command(full),
        fingerprint: "f".into(),
        state: IntentState::Queued,
        attempts: if full {
            vec![attempt(true)]
        } else {
            Vec::new()
        },
        last_result: full.then(|| result(true)),
        reason: full.then(|| "why".into()),
        appended: full.then_some(true),
        appended_version: full.then_some(2),
        created_at: 1_000,
        updated_at: 2_000,
        revision: 3,
        scope: full.then(|| "s".into()),
        scope_seq: full.then_some(1),
        waits_for: full.then(|| "i-0".into()),
    }
}

fn outcome(full: bool) -> Outcome {
    Outcome {
        status: Status::Succeeded,
        intent_id: "i-1".into(),
        request_id: "r-1".into(),
        intent_key: full.then(|| "k".into()),
        appended: full.then_some(true),
        result: full.then(|| result(true)),
        error: full.then(|| error(true)),
        downstream_pending: full.then_some(CommandStage::Projected),
        appended_version: full.then_some(2),
        appended_command_id: full.then(|| "c-1".into()),
        reason: full.then(|| "why".into()),
        attempts: 1,
    }
}

fn effect(full: bool) -> EffectRecord {
    EffectRecord {
        schema_version: 1,
        namespace: "n".into(),
        identity: "e-1".into(),
        state: EffectState::Done,
        attempt: 1,
        owner: "o".into(),
        started_at: 1_000,
        lease_until: 2_000,
        finished_at: full.then_some(1_500),
        result: full.then_some(JsonValue::Int(1)),
        reconciled: full,
        last_error: full.then(|| "boom".into()),
        revision: 1,
    }
}

/// Fields of events written as text: present in every event or in some (`name?`).
fn event_fields(events: &[String]) -> Vec<String> {
    let all: Vec<BTreeSet<String>> = events
        .iter()
        .map(|t| keys(&serde_json::from_str(t).unwrap()))
        .collect();
    let union: BTreeSet<&String> = all.iter().flatten().collect();
    union
        .into_iter()
        .map(|k| {
            if all.iter().all(|s| s.contains(k)) {
                k.clone()
            } else {
                format!("{k}?")
            }
        })
        .collect()
}

/// Every wire type's fields, by the name its `.d.ts` declaration has
/// (`Parent.field` for an inline object, `[]` for an array's element).
fn table() -> BTreeMap<&'static str, Vec<String>> {
    let mut t = BTreeMap::new();
    let (full, min) = read_back(&record(true), &record(false));
    t.insert("IntentRecord", fields(&full, &min));
    t.insert(
        "IntentRecord.command",
        fields(&full["command"], &min["command"]),
    );
    let (full, min) = read_back(&aggregate(true), &aggregate(false));
    t.insert("AggregateIdentity", fields(&full, &min));
    read_back(&command(true), &command(false));
    let (full, min) = read_back(&wait(true), &wait(false));
    t.insert("WaitSpec", fields(&full, &min));
    let (full, min) = read_back(&attempt(true), &attempt(false));
    t.insert("Attempt", fields(&full, &min));
    let (full, min) = read_back(&result(true), &result(false));
    t.insert("CommandResult", fields(&full, &min));
    let (full, min) = read_back(&function(), &function());
    t.insert("FunctionInfo", fields(&full, &min));
    let (full, min) = read_back(&binding_error(), &binding_error());
    t.insert("BindingError", fields(&full, &min));
    let (full, min) = read_back(&error(true), &error(false));
    t.insert("ErrorInfo", fields(&full, &min));
    t.insert(
        "Outcome",
        fields(&complete(&outcome(true)), &written(&outcome(false))),
    );
    let (full, min) = read_back(&effect(true), &effect(false));
    t.insert("EffectRecord", fields(&full, &min));
    // Every kind with every detail it is written with (engine/drive.rs).
    let (r, bare) = (record(true), record(false));
    let mut lifecycle = Vec::new();
    for kind in [
        "attemptSent",
        "stage",
        "attemptEnded",
        "confirmAsked",
        "confirmAnswered",
        "retryScheduled",
        "outcome",
    ] {
        let detail = match kind {
            "attemptSent" => Detail::Trace("00-1-2-01"),
            "confirmAnswered" => Detail::Answer("appended"),
            "retryScheduled" => Detail::RetryAt(9),
            _ => Detail::None,
        };
        for record in [&r, &bare] {
            lifecycle.push(events::lifecycle(kind, 5, record, detail));
        }
    }
    t.insert("IntentTelemetryEvent", event_fields(&lifecycle));
    t.insert(
        "IntentEvent",
        event_fields(&[events::announcement(&r, 3), events::announcement(&bare, 3)]),
    );
    let down = Availability::Down {
        since: 1,
        next_look_at: 2,
        failures: 1,
    };
    t.insert(
        "HistoryTelemetryEvent",
        event_fields(&[
            events::history_event(3, Availability::Up, down, 1),
            events::history_event(4, down, Availability::Up, 0),
        ]),
    );
    t
}

#[test]
fn every_wire_type_writes_the_fields_its_declaration_has() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/api/wire-fields.json");
    let now = serde_json::to_string_pretty(&table()).unwrap() + "\n";
    if std::env::var_os("WOW_ACCEPT").is_some() {
        std::fs::write(&path, &now).unwrap();
    }
    let pinned = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        pinned == now,
        "the writers' fields differ from tests/api/wire-fields.json: update the .d.ts (src/js/types.rs) \
         and the file (WOW_ACCEPT=1 cargo test -p wow-command-core --lib wire_fields); what they write now:\n{now}"
    );
}

// ------------------------------------------------------ the declarations

use crate::protocol::declaration::{ts_types, union, Declared, TsType};

ts_types! {
    CommandStage => "CommandStage",
    // Gateways name kinds and codes this build does not know: read as sent.
    FunctionKind => "string",
    ErrorCode => "string",
    // A value as stored: whatever the command or the effect gave.
    JsonValue => "unknown",
    // How an attempt ended, as the journal keeps it: a diagnosis, not a contract.
    AttemptOutcome => "unknown",
}

impl TsType for WaitEnd {
    fn ts() -> String {
        union(WaitEnd::WIRE.iter().map(|(_, name)| (*name).to_owned()))
    }
}

impl TsType for EffectState {
    fn ts() -> String {
        // Written through its writer, so the union says what is stored.
        let all = [EffectState::Started, EffectState::Done];
        for state in &all {
            // Every state listed: a new one fails to compile here until it is.
            match state {
                EffectState::Started | EffectState::Done => {}
            }
        }
        union(all.iter().map(|s| written(s).as_str().unwrap().to_owned()))
    }
}

/// The generated file: each entry's wire types, declared from their lists.
fn declarations() -> String {
    let client = [
        AggregateIdentity::declaration(),
        WaitSpec::declaration(),
        Attempt::declaration(),
        CommandResult::declaration(),
        FunctionInfo::declaration(),
        BindingError::declaration(),
        ErrorInfo::declaration(),
    ]
    .join("\n");
    let consumer = EffectRecord::declaration();
    format!(
        "//! The TypeScript declarations of the wire types whose field lists are\n\
         //! `wire_object!`s in the core: written from those lists by the core's\n\
         //! `wire_fields` test, never by hand. After a change to a list:\n\
         //! `WOW_ACCEPT=1 cargo test -p wow-command-core --lib wire_fields`.\n\
         \n\
         use wasm_bindgen::prelude::*;\n\
         \n\
         /// The command client's wire types.\n\
         #[cfg(feature = \"client\")]\n\
         #[wasm_bindgen(typescript_custom_section)]\n\
         const CLIENT: &'static str = r#\"\n{client}\"#;\n\
         \n\
         /// The consumer's.\n\
         #[cfg(feature = \"consumer\")]\n\
         #[wasm_bindgen(typescript_custom_section)]\n\
         const CONSUMER: &'static str = r#\"\n{consumer}\"#;\n"
    )
}

#[test]
fn the_wire_types_are_declared_from_their_field_lists() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src/js/wire_types.rs");
    let now = declarations();
    if std::env::var_os("WOW_ACCEPT").is_some() {
        std::fs::write(&path, &now).unwrap();
    }
    let pinned = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        pinned == now,
        "src/js/wire_types.rs is not what the field lists declare: \
         WOW_ACCEPT=1 cargo test -p wow-command-core --lib wire_fields; what they declare now:\n{now}"
    );
}
