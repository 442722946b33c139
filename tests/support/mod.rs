//! Shared by the wasm storage tests: JS adapters, an intent, and the
//! store contract every backend must meet.
#![allow(dead_code)]

pub mod gateway_client;

use std::future::Future;
use std::task::Poll;
use wasm_bindgen::prelude::*;

use wow_command_client::core::journal::{
    new_record, AggregateIdentity, CommandSpec, IntentRecord, IntentState, Listing, NewIntent,
    RecordStore, RequestIdPolicy, SeededRandom, StoreError, WaitSpec,
};
use wow_command_client::core::protocol::{float_text, CommandStage, JsonValue};
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

/// A new intent's record, as the engine makes it (not written yet).
pub fn made(ns: &str, intent: NewIntent, seed: u64) -> IntentRecord {
    let mut random = SeededRandom::new(seed);
    new_record(
        ns,
        RequestIdPolicy::default(),
        float_text,
        NOW,
        intent,
        &mut random,
    )
    .unwrap()
    .0
}

/// A new intent's record after its first write (a compare-and-swap create).
pub async fn written(store: &AnyStore, ns: &str, intent: NewIntent, seed: u64) -> IntentRecord {
    let mut record = made(ns, intent, seed);
    record.revision = store.put(&record).await.unwrap();
    record
}

/// Every record of a namespace.
pub async fn listed(store: &AnyStore, ns: &str) -> Vec<IntentRecord> {
    let listing: Listing<IntentRecord> = store.list(ns).await.unwrap();
    listing.records
}

/// Removes every record of a namespace; how many there were.
pub async fn cleared(store: &AnyStore, ns: &str) -> usize {
    let records = listed(store, ns).await;
    let ids: Vec<&str> = records.iter().map(|r| r.intent_id.as_str()).collect();
    RecordStore::<IntentRecord>::delete_many(store, ns, &ids)
        .await
        .unwrap();
    ids.len()
}

/// The store contract over one backend, through the operations the
/// client's executor performs (`store.js`): a first write, read back by a
/// fresh store over the same storage (a reload), compare-and-swap, listing,
/// a scope's listing, removal, and two first writes at once.
pub async fn store_contract(open: impl Fn(&str) -> AnyStore) {
    let ns = unique("ns");
    let store = open(&ns);
    let mut record = written(&store, &ns, intent(Some("k1"), "a1"), 1).await;
    assert_eq!(record.revision, 1);
    // "Reload": a new store instance finds the record and its requestId.
    let reloaded = open(&ns);
    let found: Option<IntentRecord> = reloaded.get(&ns, &record.intent_id).await.unwrap();
    assert_eq!(found.as_ref(), Some(&record), "found after reload");
    // Compare-and-swap.
    let mut stale = record.clone();
    record.state = IntentState::Sending;
    record.revision = store.put(&record).await.unwrap();
    assert_eq!(record.revision, 2);
    stale.state = IntentState::Unknown;
    assert!(matches!(
        reloaded.put(&stale).await,
        Err(StoreError::Conflict { current: Some(2) })
    ));
    let found: Option<IntentRecord> = reloaded.get(&ns, &record.intent_id).await.unwrap();
    assert_eq!(found.map(|r| r.state), Some(IntentState::Sending));
    // Listing and removal.
    let other = written(&store, &ns, intent(None, "a2"), 2).await;
    assert_eq!(listed(&reloaded, &ns).await.len(), 2);
    RecordStore::<IntentRecord>::delete(&store, &ns, &other.intent_id)
        .await
        .unwrap();
    let found: Option<IntentRecord> = reloaded.get(&ns, &other.intent_id).await.unwrap();
    assert_eq!(found, None);
    assert_eq!(cleared(&store, &ns).await, 1);
    assert!(listed(&store, &ns).await.is_empty());
    // Two first writes at once (one batch in IndexedDB), one of them to a
    // key another writer took first: that one is refused with the revision
    // found, and the other is written all the same. Unresolved records: a
    // settled one's write may answer before its compare (IndexedDB).
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
    let (ahead, (refused, fresh_written)) = both(
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
    assert_eq!(fresh_written.unwrap(), 1);
    let stored: Option<IntentRecord> = store.get(&ns, &fresh.intent_id).await.unwrap();
    assert_eq!(stored.map(|r| r.revision), Some(1));
    assert_eq!(cleared(&store, &ns).await, 4);
    // A scope's listing: its records (a store of objects skips the others
    // undecoded; the caller filters again).
    for (n, scope) in ["s", "t", "s", "s"].into_iter().enumerate() {
        let scoped = NewIntent {
            scope: Some(scope.to_owned()),
            ..intent(None, "a3")
        };
        written(&store, &ns, scoped, 10 + n as u64).await;
    }
    written(&store, &ns, intent(None, "a4"), 20).await;
    for (scope, count) in [("s", 3), ("t", 1)] {
        let listing: Listing<IntentRecord> =
            reloaded.list_where(&ns, ("scope", scope)).await.unwrap();
        let of_scope = listing
            .records
            .iter()
            .filter(|r| r.scope.as_deref() == Some(scope))
            .count();
        assert_eq!(of_scope, count, "scope {scope}");
    }
    assert_eq!(cleared(&store, &ns).await, 5);
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
