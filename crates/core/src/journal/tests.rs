//! What the journal decides, each a function the engine calls: a new
//! intent's record and its ids, a key given again, compare-and-swap over
//! the memory store, retention, eviction, re-deciding, the record's codec.
//! How the engine orders them (written before sent, a key's race between
//! tabs) is tested by driving it (engine/tests.rs).

use super::record::decode_json_text;
use super::*;
use crate::protocol::test_support::{block_on, test};
use crate::protocol::{float_text, CommandStage, JsonValue};

const NOW: i64 = 1_764_297_052_692;
const DAY: i64 = 24 * 60 * 60 * 1000;

pub(super) fn command(path: &str, create: bool, amount: i64) -> CommandSpec {
    CommandSpec {
        method: if create { "POST" } else { "PUT" }.into(),
        path: path.into(),
        body: JsonValue::Object(vec![("amount".into(), JsonValue::Int(amount))]).into(),
        expected_version: None,
        create,
        wait: WaitSpec {
            stage: CommandStage::Processed,
            context: None,
            processor: None,
            function: None,
            tail_stage: None,
            timeout_ms: 30_000,
        },
        headers: vec![],
    }
}

fn intent(key: Option<&str>, id: &str, amount: i64) -> NewIntent {
    NewIntent {
        scope: None,
        intent_key: key.map(str::to_owned),
        aggregate: AggregateIdentity {
            resource: "account".into(),
            aggregate_id: id.into(),
            ..AggregateIdentity::default()
        },
        command: command(&format!("/account/{id}/lock_amount"), false, amount),
    }
}

fn create_intent(key: Option<&str>) -> NewIntent {
    NewIntent {
        scope: None,
        intent_key: key.map(str::to_owned),
        aggregate: AggregateIdentity {
            resource: "account".into(),
            ..AggregateIdentity::default()
        },
        command: command("/account/create_account", true, 0),
    }
}

/// A new intent's record and the fingerprint its key is bound to, made as
/// the engine makes them at `now` (the core's number text), its random ids
/// from `seed`: for every test of the core that needs one.
pub(crate) fn made_with(
    ns: &str,
    policy: RequestIdPolicy,
    now: i64,
    intent: NewIntent,
    seed: u64,
) -> (IntentRecord, String) {
    new_record(
        ns,
        policy,
        float_text,
        now,
        intent,
        &mut SeededRandom::new(seed),
    )
    .unwrap()
}

/// A new intent's record, as the engine makes it.
fn made(intent: NewIntent, seed: u64) -> IntentRecord {
    made_in("n", RequestIdPolicy::default(), intent, seed)
}

fn made_in(ns: &str, policy: RequestIdPolicy, intent: NewIntent, seed: u64) -> IntentRecord {
    made_with(ns, policy, NOW, intent, seed).0
}

/// The fingerprint a new intent's key is bound to.
fn fingerprint(intent: NewIntent) -> String {
    made_with("n", RequestIdPolicy::default(), NOW, intent, 1).1
}

#[test]
fn a_new_intent_is_pending_under_a_fresh_v7_request_id() {
    let record = made(intent(None, "a1", 5), 1);
    assert_eq!(record.state, IntentState::Pending);
    assert_eq!(record.intent_id, record.request_id);
    assert_eq!(record.revision, 0, "written by its first compare-and-swap");
    assert_eq!(&record.request_id[14..15], "7", "UUIDv7 by default");
    // Each keyless intent is a new intent.
    assert_ne!(made(intent(None, "a1", 5), 2).request_id, record.request_id);
}

#[test]
fn v4_policy_on_request() {
    let record = made_in("n", RequestIdPolicy::RandomV4, intent(None, "a", 1), 2);
    assert_eq!(&record.request_id[14..15], "4");
}

#[test]
fn the_same_key_is_the_same_intent_until_and_after_it_settles() {
    let mut record = made(intent(Some("pay-42"), "a1", 5), 3);
    let same = fingerprint(intent(Some("pay-42"), "a1", 5));
    assert_eq!(
        replay("pay-42", record.clone(), &same),
        Ok(Begun::Unresolved(record.clone()))
    );
    record.state = IntentState::Succeeded;
    assert_eq!(
        replay("pay-42", record.clone(), &same),
        Ok(Begun::Settled(record.clone()))
    );
    let other = fingerprint(intent(Some("pay-42"), "a1", 6));
    assert_eq!(
        replay("pay-42", record.clone(), &other),
        Err(JournalError::IntentKeyReused {
            intent_key: "pay-42".into(),
            request_id: record.request_id.clone()
        })
    );
}

#[test]
fn a_keyed_intent_keeps_its_request_id_and_aggregate_id_when_storage_is_lost() {
    let before = made(create_intent(Some("signup")), 4);
    let after = made(create_intent(Some("signup")), 5);
    assert_eq!(before.request_id, after.request_id);
    assert_eq!(before.aggregate.aggregate_id, after.aggregate.aggregate_id);
    assert!(!before.aggregate.aggregate_id.is_empty());
    // Another namespace is another intent.
    let elsewhere = made_in(
        "m",
        RequestIdPolicy::default(),
        create_intent(Some("signup")),
        4,
    );
    assert_ne!(elsewhere.request_id, before.request_id);
}

#[test]
fn creates_get_a_client_side_id_and_other_commands_need_one() {
    let created = made(create_intent(None), 5);
    let id = &created.aggregate.aggregate_id;
    assert_eq!(id.len(), 36);
    assert_eq!(created.confirm_query().aggregate_id, *id);
    assert_eq!(created.confirm_query().request_id, created.request_id);
    let missing = made(intent(None, "", 1), 5);
    assert_eq!(
        missing.aggregate.check_id(missing.command.create),
        Err(JournalError::MissingAggregateId)
    );
}

#[test]
fn writes_are_compare_and_swap() {
    let store = MemoryStore::new();
    let record = made(intent(None, "a", 1), 6);
    assert_eq!(block_on(store.put(&record)), Ok(1));
    let mut mine = record.clone();
    mine.revision = 1;
    let theirs = mine.clone();
    mine.state = IntentState::Sending;
    assert_eq!(block_on(store.put(&mine)), Ok(2));
    assert_eq!(
        block_on(store.put(&theirs)),
        Err(StoreError::Conflict { current: Some(2) })
    );
    assert_eq!(
        block_on(store.put(&record)),
        Err(StoreError::Conflict { current: Some(2) }),
        "a second first write is refused"
    );
    let stored: IntentRecord = block_on(store.get("n", &mine.intent_id)).unwrap().unwrap();
    assert_eq!(stored.state, IntentState::Sending);
}

#[test]
fn retention_prunes_only_old_settled_intents() {
    let records: Vec<IntentRecord> = IntentState::ALL
        .into_iter()
        .enumerate()
        .map(|(i, state)| IntentRecord {
            state,
            ..made(intent(None, "a", 1), 10 + i as u64)
        })
        .collect();
    let state_of = |id: &str| records.iter().find(|r| r.intent_id == id).unwrap().state;
    assert!(prunable(&records, NOW + 6 * DAY, 7 * DAY).is_empty());
    let mut gone: Vec<IntentState> = prunable(&records, NOW + 8 * DAY, 7 * DAY)
        .into_iter()
        .map(state_of)
        .collect();
    gone.sort_by_key(|s| IntentState::ALL.iter().position(|x| x == s));
    assert_eq!(
        gone,
        [
            IntentState::Succeeded,
            IntentState::Rejected,
            IntentState::Conflict,
            IntentState::Withdrawn
        ]
    );
    let stay: Vec<IntentState> = records
        .iter()
        .filter(|r| !prunable(&records, NOW + 400 * DAY, 7 * DAY).contains(&r.intent_id.as_str()))
        .map(|r| r.state)
        .collect();
    assert_eq!(
        stay,
        [
            IntentState::Pending,
            IntentState::Sending,
            IntentState::Unknown,
            IntentState::Escalated,
            IntentState::Queued
        ],
        "unresolved, escalated and queued stay"
    );
}

#[test]
fn a_namespace_is_listed_and_removed_alone() {
    let store = MemoryStore::new();
    let alice = [
        made_in(
            "alice",
            RequestIdPolicy::default(),
            intent(None, "x", 1),
            11,
        ),
        made_in(
            "alice",
            RequestIdPolicy::default(),
            intent(None, "y", 1),
            12,
        ),
    ];
    let bob = made_in("bob", RequestIdPolicy::default(), intent(None, "x", 1), 13);
    for r in alice.iter().chain([&bob]) {
        block_on(store.put(r)).unwrap();
    }
    let listed: Listing = block_on(store.list("alice")).unwrap();
    assert_eq!(listed.records.len(), 2);
    let ids: Vec<&str> = alice.iter().map(|r| r.intent_id.as_str()).collect();
    block_on(RecordStore::<IntentRecord>::delete_many(
        &store, "alice", &ids,
    ))
    .unwrap();
    let listed: Listing = block_on(store.list("alice")).unwrap();
    assert!(listed.records.is_empty());
    let listed: Listing = block_on(store.list("bob")).unwrap();
    assert_eq!(listed.records, [IntentRecord { revision: 1, ..bob }]);
}

#[test]
fn records_round_trip_and_the_schema_is_checked_on_read() {
    let mut r = made(intent(Some("k"), "a", 1), 12);
    r.attempts.push(Attempt {
        number: 1,
        sent_at: NOW,
        command_id: Some("0V3o".into()),
        ended_at: Some(NOW + 30_000),
        outcome: Some(AttemptOutcome::Unknown("timeout".into())),
        caller_deadline: Some(NOW + 30_000),
        wait_ended_by: Some(WaitEnd::Timeout),
    });
    r.state = IntentState::Unknown;
    r.reason = Some("caller timeout".into());
    let text = r.stored_text(float_text);
    assert!(text.starts_with("{\"schemaVersion\":4,"));
    assert!(
        text.contains("\"body\":\"{\\\"amount\\\":1}\""),
        "the body kept as its text: {text}"
    );
    assert_eq!(decode_json_text(&text).unwrap(), r);

    let future = text.replace("\"schemaVersion\":4", "\"schemaVersion\":9");
    assert_eq!(decode_json_text(&future), Err(RecordError::FutureSchema(9)));
    let unversioned = text.replace("\"schemaVersion\":4,", "");
    assert!(matches!(
        decode_json_text(&unversioned),
        Err(RecordError::Corrupt(_))
    ));
    assert!(matches!(
        decode_json_text("{not json"),
        Err(RecordError::Corrupt(_))
    ));
    let damaged = text.replace("\"state\":\"unknown\"", "\"state\":\"lost\"");
    assert!(matches!(
        decode_json_text(&damaged),
        Err(RecordError::Corrupt(_))
    ));
}

/// The wasm build writes and reads records through the hand-written codec:
/// the same JSON as the serde derives, every optional part present and absent.
#[test]
fn the_record_codec_matches_the_derives() {
    use crate::protocol::json_codec::assert_same_as_serde;
    use crate::protocol::CommandResult;
    let mut r = made(intent(None, "a", 1), 3);
    assert_same_as_serde(&r);
    r.intent_key = Some("k".into());
    r.aggregate.context_alias = Some("ctx".into());
    r.aggregate.tenant_id = Some("t".into());
    r.aggregate.owner_id = Some("o".into());
    r.command.expected_version = Some(4);
    r.command.headers = vec![("X-Trace".into(), "1".into())];
    r.command.wait.context = Some("c".into());
    r.command.wait.processor = Some("p".into());
    r.command.wait.function = Some("f".into());
    r.command.wait.tail_stage = Some(CommandStage::Processed);
    r.command.wait.stage = CommandStage::SagaHandled;
    for (n, outcome) in [
        None,
        Some(AttemptOutcome::Succeeded),
        Some(AttemptOutcome::Failed("IllegalArgument".into())),
        Some(AttemptOutcome::Unknown("timeout".into())),
    ]
    .into_iter()
    .enumerate()
    {
        r.attempts.push(Attempt {
            number: n as u32 + 1,
            sent_at: NOW,
            command_id: (n % 2 == 0).then(|| "0V3o".into()),
            ended_at: (n > 1).then_some(NOW + 5),
            outcome,
            caller_deadline: (n > 0).then_some(NOW + 10),
            wait_ended_by: [
                None,
                Some(WaitEnd::Answer),
                Some(WaitEnd::StreamCut),
                Some(WaitEnd::NotSent),
            ][n],
        });
    }
    r.last_result = Some(
        serde_json::from_str::<CommandResult>(include_str!(
            "../../../../tests/fixtures/command_result_success.json"
        ))
        .unwrap(),
    );
    r.reason = Some("why".into());
    r.appended = Some(true);
    r.revision = u64::MAX;
    for state in IntentState::ALL {
        r.state = state;
        assert_same_as_serde(&r);
    }
}

/// The codec reads on past a bad field (one way out per reader, for the
/// module's size) but refuses what the derives refuse, naming the first
/// bad field in field order, as returning at it did.
#[test]
fn the_record_codec_refuses_what_the_derives_refuse_and_names_the_first_bad_field() {
    use crate::protocol::json_codec::FromJson;
    use crate::protocol::JsonValue;
    let record = made(intent(None, "a", 1), 3);
    let good = serde_json::to_value(&record).unwrap();
    let required = [
        "schemaVersion",
        "namespace",
        "intentId",
        "requestId",
        "aggregate",
        "command",
        "fingerprint",
        "state",
        "createdAt",
        "updatedAt",
    ];
    for (i, key) in required.iter().enumerate() {
        let mut bad = good.clone();
        bad.as_object_mut().unwrap().remove(*key);
        // A later field of the wrong type too: the first one is named.
        if let Some(later) = required.get(i + 1) {
            bad[*later] = serde_json::json!([true]);
        }
        let text = bad.to_string();
        assert!(
            serde_json::from_str::<IntentRecord>(&text).is_err(),
            "{key}"
        );
        let e =
            IntentRecord::from_json(serde_json::from_str::<JsonValue>(&text).unwrap()).unwrap_err();
        assert_eq!((e.what, e.field), ("a missing field", Some(*key)));
        // A nested record's field, named by its own key.
        let mut nested = good.clone();
        nested["command"]["wait"]["stage"] = serde_json::json!(7);
        let e = IntentRecord::from_json(
            serde_json::from_str::<JsonValue>(&nested.to_string()).unwrap(),
        )
        .unwrap_err();
        assert_eq!(e.field, Some("stage"));
    }
    let e = IntentRecord::from_json(serde_json::from_str::<JsonValue>(&good.to_string()).unwrap());
    assert_eq!(e.unwrap(), record);
}

#[test]
fn only_a_conflict_is_re_decided_and_it_keeps_its_request_id() {
    let mut record = made(intent(Some("k"), "a", 1), 13);
    let mut again = record.clone();
    assert_eq!(
        redecide(&mut again, Some(4)),
        Err(JournalError::NotInConflict {
            state: IntentState::Pending
        })
    );
    assert_eq!(again, record, "left as it is");
    record.state = IntentState::Conflict;
    let mut again = record.clone();
    redecide(&mut again, Some(4)).unwrap();
    assert_eq!(again.request_id, record.request_id);
    assert_eq!(again.command.expected_version, Some(4));
    assert_eq!(again.state, IntentState::Pending);
    // The key still replays the intent for its original payload.
    let same = fingerprint(intent(Some("k"), "a", 1));
    assert!(matches!(
        replay("k", again, &same),
        Ok(Begun::Unresolved(_))
    ));
}

#[test]
fn only_succeeded_intents_may_skip_the_flush() {
    let mut r = made(intent(None, "a", 1), 3);
    for state in [
        IntentState::Pending,
        IntentState::Sending,
        IntentState::Unknown,
        IntentState::Rejected,
        IntentState::Conflict,
        IntentState::Escalated,
    ] {
        r.state = state;
        assert!(r.needs_flush(), "{state:?} must be flushed");
    }
    r.state = IntentState::Succeeded;
    assert!(!r.needs_flush());
}

/// A store filled with a client's own history makes room instead of
/// refusing: settled intents go, keyless and oldest first; unresolved,
/// escalated and conflicted ones never do (the engine's eviction, driven:
/// engine/tests.rs).
#[test]
fn settled_intents_are_evicted_keyless_and_oldest_first_and_no_others() {
    let states = [
        (Some("k1"), IntentState::Succeeded),
        (None, IntentState::Succeeded),
        (None, IntentState::Rejected),
        (None, IntentState::Unknown),
        (None, IntentState::Escalated),
        (None, IntentState::Conflict),
        (None, IntentState::Withdrawn),
        (None, IntentState::Pending),
    ];
    let records: Vec<IntentRecord> = states
        .iter()
        .enumerate()
        .map(|(i, (key, state))| IntentRecord {
            state: *state,
            ..made(intent(*key, "a", 1), 21 + i as u64)
        })
        .collect();
    let id = |i: usize| records[i].intent_id.as_str();
    assert_eq!(evictable(&records, "other"), [id(1), id(2), id(6), id(0)]);
    assert_eq!(
        evictable(&records, id(1)),
        [id(2), id(6), id(0)],
        "never the one written"
    );
}

/// Only an outcome the server began executing is replayed: a keyed intent
/// refused before the command bus goes out again under the same requestId;
/// one rejected at PROCESSED is replayed.
#[test]
fn a_keyed_intent_refused_before_the_bus_is_sent_again_with_its_request_id() {
    use crate::protocol::CommandResult;
    let mut r = made(intent(Some("pay-1"), "a", 1), 31);
    r.state = IntentState::Rejected;
    r.appended = Some(false);
    assert!(r.refused_before_the_bus());
    let again = sent_again(r.clone(), None);
    assert_eq!(again.request_id, r.request_id, "the same requestId");
    assert_eq!(again.state, IntentState::Pending);

    let mut processed: CommandResult = serde_json::from_str(include_str!(
        "../../../../tests/fixtures/command_result_success.json"
    ))
    .unwrap();
    processed.error_code = crate::protocol::ErrorCode::parse("IllegalArgument");
    r.last_result = Some(processed);
    assert!(
        !r.refused_before_the_bus(),
        "a rejection at PROCESSED is the server's decision: replayed"
    );
}

#[test]
fn resume_drives_unresolved_and_escalated_intents_and_leaves_settled_ones() {
    let driven: Vec<IntentState> = IntentState::ALL
        .into_iter()
        .filter(|s| s.is_resumable())
        .collect();
    assert_eq!(
        driven,
        vec![
            IntentState::Pending,
            IntentState::Sending,
            IntentState::Unknown,
            IntentState::Escalated,
            IntentState::Queued
        ]
    );
}

#[test]
fn a_record_keeps_a_bounded_part_of_a_large_answer() {
    let mut r = made(intent(Some("k"), "a", 1), 3);
    let text = include_str!("../../../../tests/fixtures/command_result_success.json");
    let small: crate::protocol::CommandResult = serde_json::from_str(text).unwrap();
    r.last_result = Some(small.clone());
    assert_eq!(
        decode_json_text(&r.stored_text(float_text))
            .unwrap()
            .last_result,
        Some(small.clone()),
        "an answer of a usual size is kept whole"
    );
    let mut large = small;
    large.error_msg = "é".repeat(10_000);
    large.binding_errors = (0..500)
        .map(|i| crate::protocol::BindingError {
            name: format!("f{i}"),
            msg: "bad".into(),
        })
        .collect();
    large.result = JsonValue::Object(vec![(
        "blob".into(),
        JsonValue::String("x".repeat(1 << 20)),
    )]);
    r.last_result = Some(large.clone());
    let stored = r.stored_text(float_text);
    assert!(stored.len() < 30_000, "{} bytes stored", stored.len());
    let kept = decode_json_text(&stored).unwrap().last_result.unwrap();
    assert_eq!(kept.error_msg.len(), 4_096);
    assert_eq!(kept.binding_errors.len(), 64);
    assert_eq!(kept.result, JsonValue::empty_object());
    assert_eq!(
        (kept.request_id, kept.stage),
        (large.request_id, large.stage)
    );
}

/// A body the host holds is left out of a record's writes, and only it:
/// the text around the hole, with the body written in as a JSON string, is
/// exactly the record's stored text, for any body text.
#[test]
fn a_held_body_leaves_a_hole_where_its_stored_text_goes() {
    let r = made(intent(Some("k"), "a", 1), 12);
    let texts = [
        r#"{"note":"\"quoted\" \\back\\ é 😀 \u2028 </script>","price":0.30000000000000004}"#
            .to_owned(),
        format!(
            r#"{{"items":[{}]}}"#,
            vec![r#"{"a":"\"x\""}"#; 5_000].join(",")
        ),
    ];
    for text in texts {
        let value = crate::protocol::json_text::read_json_text(&text, 64)
            .unwrap()
            .fill(&[0.30000000000000004]);
        for held in [true, false] {
            let mut r = r.clone();
            let h: Option<Box<dyn std::any::Any>> =
                held.then(|| Box::new(()) as Box<dyn std::any::Any>);
            r.command.body = Body::from_caller(value.clone(), text.clone(), Vec::new(), h);
            let whole = r.stored_text(float_text);
            let parts = r.stored_parts(float_text);
            assert_eq!(parts.whole(), whole, "held: {held}");
            match &parts.hole {
                Some((at, body)) => {
                    assert!(held);
                    assert!(
                        parts.text[..*at].ends_with(",\"body\":"),
                        "{}",
                        &parts.text[..*at]
                    );
                    assert!(parts.text[*at..].starts_with(",\"create\":"));
                    assert!(
                        !parts.text.contains("items") && !parts.text.contains("note"),
                        "none of it written"
                    );
                    assert_eq!(body, &r.command.body);
                }
                None => {
                    assert!(!held);
                    assert_eq!(parts.text, whole);
                }
            }
            // Read back as any record is: the same record.
            assert_eq!(
                decode_json_text(&whole).unwrap().command.body,
                Body::from_text(text.clone())
            );
        }
    }
}
