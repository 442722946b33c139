//! Shared by the wasm storage tests: JS adapters, an intent, and the
//! journal contract every backend must meet.
#![allow(dead_code)]

pub mod gateway_client;

use std::future::Future;
use std::task::Poll;
use wasm_bindgen::prelude::*;

use wow_command_client::core::journal::{
    AggregateIdentity, Begun, CommandSpec, IntentRecord, IntentState, Journal, JournalError,
    NewIntent, RecordStore, SeededRandom, StoreError, WaitSpec,
};
use wow_command_client::core::protocol::{CommandStage, JsonValue};
use wow_command_client::web::storage::AnyStore;

#[wasm_bindgen(module = "/tests/support/adapters.js")]
extern "C" {
    #[wasm_bindgen(js_name = memoryAdapter)]
    pub fn memory_adapter(atomic: bool) -> JsValue;
    #[wasm_bindgen(js_name = adapterRawSet)]
    pub fn adapter_raw_set(adapter: &JsValue, key: &str, value: &str);
    #[wasm_bindgen(js_name = adapterRawHas)]
    pub fn adapter_raw_has(adapter: &JsValue, key: &str) -> bool;
    #[wasm_bindgen(js_name = adapterRawGet)]
    pub fn adapter_raw_get(adapter: &JsValue, key: &str) -> Option<String>;
    #[wasm_bindgen(js_name = failingAdapter)]
    pub fn failing_adapter(name: &str) -> JsValue;
    #[wasm_bindgen(js_name = recordingAdapter)]
    pub fn recording_adapter() -> JsValue;
    #[wasm_bindgen(js_name = objectAnsweringAdapter)]
    pub fn object_answering_adapter() -> JsValue;
    #[wasm_bindgen(js_name = adapterCalls)]
    pub fn adapter_calls(adapter: &JsValue) -> String;
}

pub const NOW: i64 = 1_764_297_052_692;

pub fn intent(key: Option<&str>, id: &str) -> NewIntent {
    NewIntent {
        scope: None,
        intent_key: key.map(str::to_owned),
        aggregate: AggregateIdentity {
            resource: "account".into(),
            aggregate_id: id.into(),
            ..AggregateIdentity::default()
        },
        command: CommandSpec {
            method: "PUT".into(),
            path: format!("/account/{id}/lock_amount"),
            body: JsonValue::Object(vec![("amount".into(), JsonValue::Int(5))]).into(),
            expected_version: None,
            create: false,
            wait: WaitSpec {
                stage: CommandStage::Snapshot,
                context: None,
                processor: None,
                function: None,
                tail_stage: None,
                timeout_ms: 5_000,
            },
            headers: vec![("Command-Header-trace".into(), "t1".into())],
        },
    }
}

pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", js_sys::Math::random().to_bits())
}

/// Begin, reload (a fresh store over the same storage), save, CAS conflict,
/// keyed replay: the journal contract over one backend.
pub async fn journal_contract(open: impl Fn(&str) -> AnyStore) {
    let ns = unique("ns");
    let mut rng = SeededRandom::new(1);
    let journal = Journal::new(open(&ns), &ns);
    let Begun::Created(mut record) = journal
        .begin(NOW, intent(Some("k1"), "a1"), &mut rng)
        .await
        .unwrap()
    else {
        panic!("created")
    };
    // "Reload": a new store instance finds the record and its requestId.
    let reloaded = Journal::new(open(&ns), &ns);
    let found = reloaded
        .find("k1")
        .await
        .unwrap()
        .expect("found after reload");
    assert_eq!(found, record);
    assert_eq!(reloaded.unresolved().await.unwrap().len(), 1);
    // The same key again: the same unresolved intent.
    let again = reloaded
        .begin(NOW + 1, intent(Some("k1"), "a1"), &mut rng)
        .await
        .unwrap();
    assert_eq!(again, Begun::Unresolved(record.clone()));
    // Compare-and-swap.
    let mut stale = record.clone();
    record.state = IntentState::Sending;
    journal.save(&mut record, NOW + 2).await.unwrap();
    stale.state = IntentState::Unknown;
    assert!(matches!(
        reloaded.save(&mut stale, NOW + 3).await,
        Err(JournalError::Storage(StoreError::Conflict { .. }))
    ));
    record.state = IntentState::Succeeded;
    journal.save(&mut record, NOW + 4).await.unwrap();
    let replay = reloaded
        .begin(NOW + 5, intent(Some("k1"), "a1"), &mut rng)
        .await
        .unwrap();
    assert_eq!(replay, Begun::Settled(record.clone()));
    // Prune after the window; then clear.
    assert_eq!(journal.prune(NOW + 8 * 86_400_000).await.unwrap(), 1);
    journal
        .begin(NOW, intent(None, "a2"), &mut rng)
        .await
        .unwrap();
    assert_eq!(journal.clear().await.unwrap(), 1);
    assert!(journal.list().await.unwrap().records.is_empty());
    // Two first writes at once (one batch in IndexedDB), one of them to a
    // key another writer took first: that one is refused with the revision
    // found, and the other is written all the same. Unresolved records: a
    // settled one's write may answer before its compare (IndexedDB).
    let store = open(&record.namespace);
    let mut taken = record.clone();
    taken.intent_id = unique("taken");
    taken.revision = 0;
    taken.state = IntentState::Pending;
    let first = store.put(&taken).await.unwrap();
    let [mut fresh, mut one, mut two] = [0; 3].map(|_| taken.clone());
    fresh.intent_id = unique("fresh");
    one.intent_id = unique("one");
    two.intent_id = unique("two");
    // Behind two writes in flight, so that IndexedDB carries both in one transaction.
    let (ahead, (refused, written)) = both(
        both(store.put(&one), store.put(&two)),
        both(store.put(&taken), store.put(&fresh)),
    )
    .await;
    assert!(ahead.0.is_ok() && ahead.1.is_ok());
    match refused {
        Err(StoreError::Conflict { current }) => assert_eq!(current, Some(first)),
        other => panic!(
            "expected a conflict, got {}",
            other.map_or_else(|e| e.to_string(), |r| format!("revision {r}"))
        ),
    }
    assert_eq!(written.unwrap(), 1);
    let stored: Option<IntentRecord> = store.get(&ns, &fresh.intent_id).await.unwrap();
    assert_eq!(stored.map(|r| r.revision), Some(1));
    assert_eq!(journal.clear().await.unwrap(), 4);
    // Scopes: a scope's records are listed without the others' (a store of
    // objects skips them undecoded), in places every reader agrees on.
    let scoped = |scope: &str, id: &str| NewIntent {
        scope: Some(scope.to_owned()),
        ..intent(None, id)
    };
    let mut placed = Vec::new();
    for (n, scope) in ["s", "t", "s", "s"].into_iter().enumerate() {
        let begun = journal
            .begin_for_drive(NOW + n as i64, scoped(scope, "a3"), &mut rng)
            .await
            .unwrap();
        placed.push(begun.record().clone());
    }
    journal
        .begin(NOW, intent(None, "a4"), &mut rng)
        .await
        .unwrap();
    let mut in_s = reloaded.in_scope("s").await.unwrap();
    in_s.sort_by_key(|r| r.scope_seq);
    let seqs: Vec<_> = in_s.iter().map(|r| (r.scope_seq, r.state)).collect();
    assert_eq!(
        seqs,
        [
            (Some(1), IntentState::Pending),
            (Some(2), IntentState::Queued),
            (Some(3), IntentState::Queued)
        ]
    );
    assert_eq!(
        in_s[1].waits_for.as_deref(),
        Some(placed[0].intent_id.as_str())
    );
    assert_eq!(reloaded.in_scope("t").await.unwrap().len(), 1);
    let (head, before) = reloaded.ahead_of(&placed[3]).await.unwrap().unwrap();
    assert_eq!(
        (head.intent_id, before),
        (placed[0].intent_id.clone(), placed[2].intent_id.clone())
    );
    assert_eq!(journal.clear().await.unwrap(), 5);
}

/// Polls two futures together until both are done: both start before
/// either finishes (a store sees them fall due at once).
pub async fn both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    let (mut done_a, mut done_b) = (None, None);
    std::future::poll_fn(|cx| {
        if done_a.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                done_a = Some(v);
            }
        }
        if done_b.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                done_b = Some(v);
            }
        }
        if done_a.is_some() && done_b.is_some() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    (done_a.unwrap(), done_b.unwrap())
}
