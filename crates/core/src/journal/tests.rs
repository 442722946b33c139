//! Journal behaviour over the in-memory store and a failing one.

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

#[test]
fn a_new_intent_is_persisted_before_begin_returns() {
    let journal = Journal::new(MemoryStore::new(), "user-1");
    let mut rng = SeededRandom::new(1);
    let begun = block_on(journal.begin(NOW, intent(None, "a1", 5), &mut rng)).unwrap();
    let Begun::Created(record) = begun else {
        panic!("created")
    };
    assert_eq!(record.state, IntentState::Pending);
    assert_eq!(record.intent_id, record.request_id);
    assert_eq!(record.revision, 1);
    assert_eq!(&record.request_id[14..15], "7", "UUIDv7 by default");
    let stored = block_on(journal.store().get("user-1", &record.intent_id)).unwrap();
    assert_eq!(stored.as_ref(), Some(&record));
    // A new client over the same storage (a reload) finds the same requestId.
    let reloaded = Journal::new(journal.into_store(), "user-1");
    let unresolved = block_on(reloaded.unresolved()).unwrap();
    assert_eq!(unresolved.len(), 1);
    assert_eq!(unresolved[0].request_id, record.request_id);
    // Each keyless intent is a new intent.
    let other = block_on(reloaded.begin(NOW, intent(None, "a1", 5), &mut rng)).unwrap();
    assert_ne!(other.record().request_id, record.request_id);
}

#[test]
fn v4_policy_on_request() {
    let journal = Journal::new(MemoryStore::new(), "n").with_policy(RequestIdPolicy::RandomV4);
    let begun =
        block_on(journal.begin(NOW, intent(None, "a", 1), &mut SeededRandom::new(2))).unwrap();
    assert_eq!(&begun.record().request_id[14..15], "4");
}

#[test]
fn the_same_key_is_the_same_intent_until_and_after_it_settles() {
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut rng = SeededRandom::new(3);
    let first = block_on(journal.begin(NOW, intent(Some("pay-42"), "a1", 5), &mut rng)).unwrap();
    let Begun::Created(mut record) = first else {
        panic!("created")
    };
    let again =
        block_on(journal.begin(NOW + 1, intent(Some("pay-42"), "a1", 5), &mut rng)).unwrap();
    assert_eq!(again, Begun::Unresolved(record.clone()));

    record.state = IntentState::Succeeded;
    block_on(journal.save(&mut record, NOW + 2)).unwrap();
    let replay =
        block_on(journal.begin(NOW + 3, intent(Some("pay-42"), "a1", 5), &mut rng)).unwrap();
    assert_eq!(replay, Begun::Settled(record.clone()));

    let reused = block_on(journal.begin(NOW + 4, intent(Some("pay-42"), "a1", 6), &mut rng));
    assert_eq!(
        reused,
        Err(JournalError::IntentKeyReused {
            intent_key: "pay-42".into(),
            request_id: record.request_id.clone()
        })
    );
    assert_eq!(
        block_on(journal.find("pay-42")).unwrap(),
        Some(record.clone())
    );
    assert_eq!(
        block_on(journal.find(&record.intent_id)).unwrap(),
        Some(record)
    );
}

#[test]
fn a_keyed_intent_keeps_its_request_id_and_aggregate_id_when_storage_is_lost() {
    let mut rng = SeededRandom::new(4);
    let before = block_on(Journal::new(MemoryStore::new(), "n").begin(
        NOW,
        create_intent(Some("signup")),
        &mut rng,
    ))
    .unwrap();
    let after = block_on(Journal::new(MemoryStore::new(), "n").begin(
        NOW + 9,
        create_intent(Some("signup")),
        &mut rng,
    ))
    .unwrap();
    assert_eq!(before.record().request_id, after.record().request_id);
    assert_eq!(
        before.record().aggregate.aggregate_id,
        after.record().aggregate.aggregate_id
    );
    assert!(!before.record().aggregate.aggregate_id.is_empty());
    // Another namespace is another intent.
    let elsewhere = block_on(Journal::new(MemoryStore::new(), "m").begin(
        NOW,
        create_intent(Some("signup")),
        &mut rng,
    ))
    .unwrap();
    assert_ne!(elsewhere.record().request_id, before.record().request_id);
}

#[test]
fn creates_get_a_client_side_id_and_other_commands_need_one() {
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut rng = SeededRandom::new(5);
    let created = block_on(journal.begin(NOW, create_intent(None), &mut rng)).unwrap();
    let id = &created.record().aggregate.aggregate_id;
    assert_eq!(id.len(), 36);
    assert_eq!(created.record().confirm_query().aggregate_id, *id);
    assert_eq!(
        created.record().confirm_query().request_id,
        created.record().request_id
    );
    let missing = block_on(journal.begin(NOW, intent(None, "", 1), &mut rng));
    assert_eq!(missing, Err(JournalError::MissingAggregateId));
}

#[test]
fn saves_are_compare_and_swap() {
    let journal = Journal::new(MemoryStore::new(), "n");
    let begun =
        block_on(journal.begin(NOW, intent(None, "a", 1), &mut SeededRandom::new(6))).unwrap();
    let mut mine = begun.record().clone();
    let mut theirs = mine.clone();
    mine.state = IntentState::Sending;
    block_on(journal.save(&mut mine, NOW + 1)).unwrap();
    assert_eq!(mine.revision, 2);
    theirs.state = IntentState::Unknown;
    let lost = block_on(journal.save(&mut theirs, NOW + 2));
    assert_eq!(
        lost,
        Err(JournalError::Storage(StoreError::Conflict {
            current: Some(2)
        }))
    );
    assert_eq!(
        theirs.updated_at, NOW,
        "a failed save leaves the record as it was"
    );
    let stored = block_on(journal.find(&mine.intent_id)).unwrap().unwrap();
    assert_eq!(stored.state, IntentState::Sending);
}

/// A store whose writes fail, as a full or blocked storage does.
struct FailingStore(Unavailable);

impl RecordStore<IntentRecord> for FailingStore {
    async fn get(&self, _: &str, _: &str) -> Result<Option<IntentRecord>, StoreError> {
        Ok(None)
    }
    async fn put(&self, _: &IntentRecord) -> Result<u64, StoreError> {
        Err(StoreError::Unavailable {
            kind: self.0,
            detail: "QuotaExceededError: the quota has been exceeded".into(),
        })
    }
    async fn delete(&self, _: &str, _: &str) -> Result<(), StoreError> {
        Ok(())
    }
    async fn list(&self, _: &str) -> Result<Listing, StoreError> {
        Ok(Listing::default())
    }
}

#[test]
fn failing_storage_refuses_the_intent() {
    let journal = Journal::new(FailingStore(Unavailable::QuotaExceeded), "n");
    let result = block_on(journal.begin(NOW, intent(None, "a", 1), &mut SeededRandom::new(7)));
    match result {
        Err(JournalError::Storage(StoreError::Unavailable { kind, .. })) => {
            assert_eq!(kind, Unavailable::QuotaExceeded)
        }
        other => panic!("expected a storage refusal, got {other:?}"),
    }
}

/// A store where another tab wins the race to create the same key.
struct RacingStore {
    inner: MemoryStore,
    winner: IntentRecord,
}

impl RecordStore<IntentRecord> for RacingStore {
    async fn get(&self, ns: &str, id: &str) -> Result<Option<IntentRecord>, StoreError> {
        self.inner.get(ns, id).await
    }
    async fn put(&self, record: &IntentRecord) -> Result<u64, StoreError> {
        if record.revision == 0
            && RecordStore::<IntentRecord>::get(&self.inner, &record.namespace, &record.intent_id)
                .await?
                .is_none()
        {
            self.inner.put(&self.winner).await?;
        }
        self.inner.put(record).await
    }
    async fn delete(&self, ns: &str, id: &str) -> Result<(), StoreError> {
        RecordStore::<IntentRecord>::delete(&self.inner, ns, id).await
    }
    async fn list(&self, ns: &str) -> Result<Listing, StoreError> {
        self.inner.list(ns).await
    }
}

#[test]
fn losing_the_race_to_create_a_key_yields_the_winners_intent() {
    let template = Journal::new(MemoryStore::new(), "n");
    let winner =
        block_on(template.begin(NOW, intent(Some("k"), "a", 1), &mut SeededRandom::new(8)))
            .unwrap()
            .record()
            .clone();
    let mut winner_as_new = winner.clone();
    winner_as_new.revision = 0;
    winner_as_new.created_at = NOW - 5;
    let journal = Journal::new(
        RacingStore {
            inner: MemoryStore::new(),
            winner: winner_as_new,
        },
        "n",
    );
    let begun =
        block_on(journal.begin(NOW, intent(Some("k"), "a", 1), &mut SeededRandom::new(9))).unwrap();
    let Begun::Unresolved(found) = begun else {
        panic!("the winner's intent")
    };
    assert_eq!(found.created_at, NOW - 5);
    assert_eq!(found.request_id, winner.request_id);
}

#[test]
fn retention_prunes_only_old_settled_intents() {
    let journal = Journal::new(MemoryStore::new(), "n").with_retention(7 * DAY);
    let mut rng = SeededRandom::new(10);
    let mut records = Vec::new();
    for state in IntentState::ALL {
        let mut r = block_on(journal.begin(NOW, intent(None, "a", 1), &mut rng))
            .unwrap()
            .record()
            .clone();
        r.state = state;
        block_on(journal.save(&mut r, NOW)).unwrap();
        records.push(r);
    }
    assert_eq!(block_on(journal.prune(NOW + 6 * DAY)).unwrap(), 0);
    assert_eq!(block_on(journal.prune(NOW + 8 * DAY)).unwrap(), 4);
    let mut left: Vec<IntentState> = block_on(journal.list())
        .unwrap()
        .records
        .iter()
        .map(|r| r.state)
        .collect();
    left.sort_by_key(|s| IntentState::ALL.iter().position(|x| x == s));
    assert_eq!(
        left,
        [
            IntentState::Pending,
            IntentState::Sending,
            IntentState::Unknown,
            IntentState::Escalated,
            IntentState::Queued
        ]
    );
    assert_eq!(
        block_on(journal.prune(NOW + 400 * DAY)).unwrap(),
        0,
        "unknown, escalated and queued stay"
    );
}

#[test]
fn clear_removes_one_namespace_only() {
    let store = MemoryStore::new();
    let mut rng = SeededRandom::new(11);
    let a = Journal::new(store, "alice");
    block_on(a.begin(NOW, intent(None, "x", 1), &mut rng)).unwrap();
    block_on(a.begin(NOW, intent(None, "y", 1), &mut rng)).unwrap();
    let b = Journal::new(a.into_store(), "bob");
    block_on(b.begin(NOW, intent(None, "x", 1), &mut rng)).unwrap();
    let a = Journal::new(b.into_store(), "alice");
    assert_eq!(block_on(a.clear()).unwrap(), 2);
    assert!(block_on(a.list()).unwrap().records.is_empty());
    let b = Journal::new(a.into_store(), "bob");
    assert_eq!(block_on(b.list()).unwrap().records.len(), 1);
}

#[test]
fn records_round_trip_and_the_schema_is_checked_on_read() {
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut r = block_on(journal.begin(NOW, intent(Some("k"), "a", 1), &mut SeededRandom::new(12)))
        .unwrap()
        .record()
        .clone();
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
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut r = block_on(journal.begin(NOW, intent(None, "a", 1), &mut SeededRandom::new(3)))
        .unwrap()
        .record()
        .clone();
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
    let journal = Journal::new(MemoryStore::new(), "n");
    let record = block_on(journal.begin(NOW, intent(None, "a", 1), &mut SeededRandom::new(3)))
        .unwrap()
        .record()
        .clone();
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
    let journal = Journal::new(MemoryStore::new(), "n");
    let begun = block_on(journal.begin(NOW, intent(Some("k"), "a", 1), &mut SeededRandom::new(13)))
        .unwrap();
    let mut record = begun.record().clone();
    let refused = block_on(journal.redecide(NOW, &record.intent_id, Some(4)));
    assert_eq!(
        refused,
        Err(JournalError::NotInConflict {
            state: IntentState::Pending
        })
    );
    record.state = IntentState::Conflict;
    block_on(journal.save(&mut record, NOW)).unwrap();
    let again = block_on(journal.redecide(NOW + 1, "k", Some(4))).unwrap();
    assert_eq!(again.request_id, record.request_id);
    assert_eq!(again.command.expected_version, Some(4));
    assert_eq!(again.state, IntentState::Pending);
    // The key still replays the intent for its original payload.
    let replay = block_on(journal.begin(
        NOW + 2,
        intent(Some("k"), "a", 1),
        &mut SeededRandom::new(14),
    ))
    .unwrap();
    assert_eq!(replay.record().request_id, record.request_id);
}

#[test]
fn only_succeeded_intents_may_skip_the_flush() {
    let mut r = block_on(Journal::new(MemoryStore::new(), "n").begin(
        NOW,
        intent(None, "a", 1),
        &mut SeededRandom::new(3),
    ))
    .unwrap()
    .record()
    .clone();
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

#[test]
fn a_keyless_intent_begun_for_a_drive_is_written_by_its_first_persist() {
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut rng = SeededRandom::new(5);
    let keyless = block_on(journal.begin_for_drive(NOW, intent(None, "a", 1), &mut rng)).unwrap();
    let record = keyless.record().clone();
    assert_eq!(record.revision, 0);
    assert_eq!(block_on(journal.find(&record.intent_id)).unwrap(), None);
    // The machine's first Persist is a compare-and-swap create.
    assert_eq!(block_on(journal.store().put(&record)).unwrap(), 1);
    // A keyed one is written at once: another tab may begin the same key.
    let keyed =
        block_on(journal.begin_for_drive(NOW, intent(Some("k"), "a", 1), &mut rng)).unwrap();
    assert_eq!(keyed.record().revision, 1);
    let again =
        block_on(journal.begin_for_drive(NOW, intent(Some("k"), "a", 1), &mut rng)).unwrap();
    assert_eq!(again.record().request_id, keyed.record().request_id);
}

/// A store with room for `capacity` records: one more is QuotaExceeded, as a
/// browser's full localStorage answers.
struct QuotaStore {
    inner: MemoryStore,
    capacity: usize,
}

impl RecordStore<IntentRecord> for QuotaStore {
    async fn get(&self, ns: &str, id: &str) -> Result<Option<IntentRecord>, StoreError> {
        self.inner.get(ns, id).await
    }
    async fn put(&self, record: &IntentRecord) -> Result<u64, StoreError> {
        let listing: Listing = self.inner.list(&record.namespace).await?;
        let exists = listing
            .records
            .iter()
            .any(|r| r.intent_id == record.intent_id);
        if !exists && listing.records.len() >= self.capacity {
            return Err(StoreError::Unavailable {
                kind: Unavailable::QuotaExceeded,
                detail: "QuotaExceededError: the quota has been exceeded".into(),
            });
        }
        self.inner.put(record).await
    }
    async fn delete(&self, ns: &str, id: &str) -> Result<(), StoreError> {
        RecordStore::<IntentRecord>::delete(&self.inner, ns, id).await
    }
    async fn list(&self, ns: &str) -> Result<Listing, StoreError> {
        self.inner.list(ns).await
    }
}

/// A journal that filled its store with its own history makes room instead
/// of refusing: settled intents go, keyless and oldest first; unresolved,
/// escalated and conflicted ones never do; with nothing to evict, the
/// refusal stands.
#[test]
fn a_full_store_evicts_settled_intents_before_it_refuses_a_new_one() {
    let journal = Journal::new(
        QuotaStore {
            inner: MemoryStore::new(),
            capacity: 6,
        },
        "n",
    );
    let mut rng = SeededRandom::new(21);
    let mut settle = |key: Option<&str>, id: &str, state: IntentState, at: i64| {
        let mut r = block_on(journal.begin(at, intent(key, id, 1), &mut rng))
            .unwrap()
            .record()
            .clone();
        r.state = state;
        block_on(journal.save(&mut r, at)).unwrap();
        r.intent_id
    };
    let keyed_old = settle(Some("k1"), "a", IntentState::Succeeded, NOW);
    let keyless_new = settle(None, "b", IntentState::Rejected, NOW + 20);
    let keyless_old = settle(None, "c", IntentState::Succeeded, NOW + 10);
    let unknown = settle(None, "d", IntentState::Unknown, NOW - 50);
    let escalated = settle(None, "e", IntentState::Escalated, NOW - 40);
    let conflict = settle(None, "f", IntentState::Conflict, NOW - 30);

    let ids = |j: &Journal<QuotaStore>| -> Vec<String> {
        block_on(j.list())
            .unwrap()
            .records
            .into_iter()
            .map(|r| r.intent_id)
            .collect()
    };
    let fresh = block_on(journal.begin(NOW + 30, intent(None, "g", 1), &mut rng)).unwrap();
    let left = ids(&journal);
    assert!(left.contains(&fresh.record().intent_id));
    assert!(
        !left.contains(&keyless_old),
        "the oldest keyless settled intent went first"
    );
    for kept in [&keyless_new, &keyed_old, &unknown, &escalated, &conflict] {
        assert!(left.contains(kept), "{kept} kept: {left:?}");
    }
    // Two more: the next keyless one, then the keyed one.
    block_on(journal.begin(NOW + 40, intent(None, "h", 1), &mut rng)).unwrap();
    assert!(!ids(&journal).contains(&keyless_new));
    block_on(journal.begin(NOW + 50, intent(None, "i", 1), &mut rng)).unwrap();
    assert!(!ids(&journal).contains(&keyed_old));
    // Now only unresolved, escalated and conflicted intents (and the fresh
    // pending ones) are left: nothing may go, so the new intent is refused.
    let mut r = block_on(journal.find(&fresh.record().intent_id))
        .unwrap()
        .unwrap();
    r.state = IntentState::Unknown;
    block_on(journal.save(&mut r, NOW + 60)).unwrap();
    let refused = block_on(journal.begin(NOW + 70, intent(None, "j", 1), &mut rng));
    assert!(
        matches!(
            refused,
            Err(JournalError::Storage(StoreError::Unavailable {
                kind: Unavailable::QuotaExceeded,
                ..
            }))
        ),
        "{refused:?}"
    );
    for kept in [&unknown, &escalated, &conflict] {
        assert!(ids(&journal).contains(kept));
    }
}

/// Only an outcome the server began executing is replayed: a keyed intent
/// refused before the command bus goes out again under the same requestId;
/// one rejected at PROCESSED is replayed.
#[test]
fn a_keyed_intent_refused_before_the_bus_is_sent_again_with_its_request_id() {
    use crate::protocol::CommandResult;
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut rng = SeededRandom::new(31);
    let first = block_on(journal.begin(NOW, intent(Some("pay-1"), "a", 1), &mut rng)).unwrap();
    let mut r = first.record().clone();
    r.state = IntentState::Rejected;
    r.appended = Some(false);
    block_on(journal.save(&mut r, NOW + 1)).unwrap();
    match block_on(journal.begin(NOW + 2, intent(Some("pay-1"), "a", 1), &mut rng)).unwrap() {
        Begun::Unresolved(again) => {
            assert_eq!(again.request_id, r.request_id, "the same requestId");
            assert_eq!(again.state, IntentState::Pending);
        }
        other => panic!("expected it to be sent again, got {other:?}"),
    }
    let stored = block_on(journal.find("pay-1")).unwrap().unwrap();
    assert_eq!(
        stored.state,
        IntentState::Pending,
        "durable before it is sent again"
    );

    let mut processed: CommandResult = serde_json::from_str(include_str!(
        "../../../../tests/fixtures/command_result_success.json"
    ))
    .unwrap();
    processed.error_code = crate::protocol::ErrorCode::parse("IllegalArgument");
    let mut r = stored;
    r.state = IntentState::Rejected;
    r.appended = Some(false);
    r.last_result = Some(processed);
    block_on(journal.save(&mut r, NOW + 3)).unwrap();
    assert!(
        matches!(
            block_on(journal.begin(NOW + 4, intent(Some("pay-1"), "a", 1), &mut rng)).unwrap(),
            Begun::Settled(_)
        ),
        "a rejection at PROCESSED is the server's decision: replayed"
    );
}

#[test]
fn resume_drives_unresolved_and_escalated_intents_and_leaves_settled_ones() {
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut rng = SeededRandom::new(3);
    for (i, state) in IntentState::ALL.into_iter().enumerate() {
        let mut r = block_on(journal.begin(NOW + i as i64, intent(None, "a", 1), &mut rng))
            .unwrap()
            .record()
            .clone();
        r.state = state;
        block_on(journal.save(&mut r, NOW + i as i64)).unwrap();
    }
    let driven: Vec<IntentState> = block_on(journal.unresolved())
        .unwrap()
        .into_iter()
        .map(|r| r.state)
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
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut r = block_on(journal.begin(NOW, intent(Some("k"), "a", 1), &mut SeededRandom::new(3)))
        .unwrap()
        .record()
        .clone();
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
    let journal = Journal::new(MemoryStore::new(), "n");
    let r = block_on(journal.begin(NOW, intent(Some("k"), "a", 1), &mut SeededRandom::new(12)))
        .unwrap()
        .record()
        .clone();
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
