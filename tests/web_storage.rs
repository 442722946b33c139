//! Intent storage in a real browser: IndexedDB, localStorage, quarantine,
//! a full storage, Web Locks and BroadcastChannel.
#![allow(clippy::disallowed_macros)] // a test: format! is allowed here (clippy.toml)
#![cfg(target_arch = "wasm32")]

mod support;

use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;
use wow_command_client::core::journal::{
    IntentRecord, IntentState, Listing, RecordStore, StoreError, Unavailable,
};
use wow_command_client::web::locks::{try_lock, LockAttempt};
use wow_command_client::web::storage::{indexed_db, AnyStore};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(inline_js = r#"
export function breakSetItem() {
  const original = Storage.prototype.setItem;
  Storage.prototype.setItem = function () {
    throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
  };
  return () => { Storage.prototype.setItem = original; };
}
export function idbRawPut(name, key, value) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(name);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const t = db.transaction(["intents"], "readwrite");
      t.objectStore("intents").put(value, key);
      t.oncomplete = () => { db.close(); resolve(); };
      t.onerror = () => reject(t.error);
    };
  });
}
export function idbRawGet(name, store, key) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(name);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const get = db.transaction([store], "readonly").objectStore(store).get(key);
      get.onsuccess = () => { db.close(); resolve(get.result ?? null); };
      get.onerror = () => reject(get.error);
    };
  });
}
export function removeKeys(keys) { for (const k of keys) localStorage.removeItem(k); }
// The page's own keys beside a journal's: named like Storage's members, of
// another namespace, and one that only begins like the journal's prefix.
export function pageKeys(ns) {
  const keys = ["getItem", "length", "key", `wow-intents/${ns}-other/x`, `wow-intents/${ns}`, `wow-intents-quarantine/${ns}x/y`];
  for (const k of keys) localStorage.setItem(k, "the page's own");
  return keys;
}
export function localValue(key) { return localStorage.getItem(key); }
export function nextMessage(channelName) {
  return new Promise((resolve) => {
    const c = new BroadcastChannel(channelName);
    c.onmessage = (e) => { c.close(); resolve(e.data); };
  });
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = breakSetItem)]
    fn break_set_item() -> js_sys::Function;
    #[wasm_bindgen(js_name = idbRawPut)]
    fn idb_raw_put(name: &str, key: &str, value: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbRawGet)]
    fn idb_raw_get(name: &str, store: &str, key: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = removeKeys)]
    fn remove_keys(keys: &js_sys::Array);
    #[wasm_bindgen(js_name = pageKeys)]
    fn page_keys(ns: &str) -> js_sys::Array;
    #[wasm_bindgen(js_name = localValue)]
    fn local_value(key: &str) -> Option<String>;
    #[wasm_bindgen(js_name = nextMessage)]
    fn next_message(channel: &str) -> js_sys::Promise;
}

#[wasm_bindgen_test]
async fn indexed_db_meets_the_contract() {
    store_contract(|ns| AnyStore::open(&"indexedDB".into(), ns).unwrap()).await;
}

#[wasm_bindgen_test]
async fn local_storage_meets_the_contract() {
    store_contract(|ns| AnyStore::open(&"localStorage".into(), ns).unwrap()).await;
}

/// A localStorage journal lists its own records only, read in one pass:
/// the page's keys beside it (one named like a Storage member, another
/// namespace's, one that only begins like its prefix) are neither listed,
/// nor moved aside as unreadable, nor changed.
#[wasm_bindgen_test]
async fn a_local_storage_journal_lists_its_own_keys_only() {
    let ns = unique("own-keys");
    let keys = page_keys(&ns);
    let store = AnyStore::open(&"localStorage".into(), &ns).unwrap();
    for (seed, id) in ["a", "b"].into_iter().enumerate() {
        written(&store, &ns, intent(None, id), seed as u64).await;
    }
    let listing: Listing<IntentRecord> = store.list(&ns).await.unwrap();
    assert_eq!(listing.records.len(), 2, "{:?}", listing.records);
    assert!(listing.quarantined.is_empty(), "{:?}", listing.quarantined);
    for key in keys.iter() {
        let key = key.as_string().unwrap();
        assert_eq!(
            local_value(&key).as_deref(),
            Some("the page's own"),
            "{key}"
        );
    }
    assert_eq!(cleared(&store, &ns).await, 2);
    remove_keys(&keys);
}

#[wasm_bindgen_test]
fn unknown_storage_names_and_incomplete_adapters_are_refused() {
    let err = AnyStore::open(&"sessionStorage".into(), "ns").unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Unavailable {
                kind: Unavailable::Missing,
                ..
            }
        ),
        "{err:?}"
    );
    let incomplete = js_sys::Object::new();
    let err = AnyStore::open(&incomplete, "ns").unwrap_err();
    assert!(err.to_string().contains("`get`"), "{err}");
}

#[wasm_bindgen_test]
async fn a_full_local_storage_refuses_before_sending() {
    let restore = break_set_item();
    let ns = unique("full");
    let store = AnyStore::open(&"localStorage".into(), &ns).unwrap();
    let result = store.put(&made(&ns, intent(None, "a"), 3)).await;
    restore.call0(&JsValue::NULL).unwrap();
    let err = result.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Unavailable {
                kind: Unavailable::QuotaExceeded,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(listed(&store, &ns).await.is_empty(), "nothing was stored");
}

#[wasm_bindgen_test]
async fn corrupt_indexed_db_records_are_quarantined_and_reported() {
    // IndexedDB.
    let ns = unique("qi");
    let store = AnyStore::open(&"indexedDB".into(), &ns).unwrap();
    written(&store, &ns, intent(None, "a"), 5).await;
    let garbage = js_sys::JSON::parse(r#"{"schemaVersion":1,"state":"lost"}"#).unwrap();
    wasm_bindgen_futures::JsFuture::from(idb_raw_put(
        &indexed_db::database_name(&ns),
        "bad",
        &garbage,
    ))
    .await
    .unwrap();
    let err = RecordStore::<IntentRecord>::get(&store, &ns, "bad")
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
    let listing: Listing<IntentRecord> = store.list(&ns).await.unwrap();
    assert_eq!(listing.records.len(), 1);
    assert_eq!(listing.quarantined.len(), 1);
    // Moved aside by the read: reported under the key every store uses for
    // it, and kept in the `quarantine` store under its own key, as earlier
    // builds kept it (they list that store's keys).
    assert_eq!(
        listing.quarantined[0].key,
        format!("wow-intents-quarantine/{ns}/bad")
    );
    let aside = wasm_bindgen_futures::JsFuture::from(idb_raw_get(
        &indexed_db::database_name(&ns),
        "quarantine",
        "bad",
    ))
    .await
    .unwrap();
    assert!(aside.is_object(), "moved to the quarantine store");
    drop(store);
    wasm_bindgen_futures::JsFuture::from(indexed_db::delete_database(&ns))
        .await
        .unwrap();
}

#[wasm_bindgen_test]
async fn one_driver_per_intent() {
    let id = unique("intent");
    let LockAttempt::Held(lock) = try_lock("ns", &id).await.unwrap() else {
        panic!("free lock")
    };
    assert!(matches!(
        try_lock("ns", &id).await.unwrap(),
        LockAttempt::Busy
    ));
    assert!(matches!(
        try_lock("ns", &unique("other")).await.unwrap(),
        LockAttempt::Held(_)
    ));
    drop(lock);
    // Releasing is asynchronous: the lock frees once the holder's promise settles.
    let mut again = try_lock("ns", &id).await.unwrap();
    for _ in 0..10 {
        if matches!(again, LockAttempt::Held(_)) {
            break;
        }
        wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&JsValue::NULL))
            .await
            .unwrap();
        again = try_lock("ns", &id).await.unwrap();
    }
    assert!(matches!(again, LockAttempt::Held(_)));
}

#[wasm_bindgen_test]
async fn state_changes_reach_other_contexts() {
    let ns = unique("bc");
    let received = next_message(&format!("wow-command-client/{ns}"));
    let mut record = made(&ns, intent(Some("order-7"), "acct-1"), 7);
    record.revision = 1;
    record.state = IntentState::Succeeded;
    record.appended = Some(true);
    wow_command_client::web::channel::announce_record(&record, 3);
    let message = wasm_bindgen_futures::JsFuture::from(received)
        .await
        .unwrap();
    let field = |name: &str| js_sys::Reflect::get(&message, &name.into()).unwrap();
    // What tabs on every build read.
    assert_eq!(
        field("intentId").as_string(),
        Some(record.intent_id.clone())
    );
    assert_eq!(field("state").as_string().as_deref(), Some("succeeded"));
    assert_eq!(field("revision").as_f64(), Some(3.0));
    // The whole version-1 event beside them, as client.subscribe delivers it.
    assert_eq!(field("version").as_f64(), Some(1.0));
    assert!(field("v").is_undefined());
    assert_eq!(field("intentKey").as_string().as_deref(), Some("order-7"));
    assert_eq!(
        field("requestId").as_string(),
        Some(record.request_id.clone())
    );
    assert_eq!(field("attempts").as_f64(), Some(0.0));
    assert_eq!(field("appended").as_bool(), Some(true));
    let aggregate = field("aggregate");
    let id = js_sys::Reflect::get(&aggregate, &"aggregateId".into()).unwrap();
    assert_eq!(id.as_string().as_deref(), Some("acct-1"));
    assert!(field("errorCode").is_null(), "no error code on a success");
    for absent in ["reason", "scope", "waitsFor"] {
        assert!(
            field(absent).is_null(),
            "{absent}: null, as IntentEvent has it"
        );
    }
}

#[wasm_bindgen_test]
async fn whether_storage_is_kept_is_answered_without_a_prompt() {
    // Reading (not asking) never prompts, in any engine: a boolean. Asking
    // is tested end to end in each engine (tests/e2e/persistence.test.mjs),
    // where Firefox's prompt stays unanswered.
    let answer = wasm_bindgen_futures::JsFuture::from(indexed_db::persistence(false))
        .await
        .unwrap();
    // A boolean where there is a StorageManager (Chromium, Firefox), null
    // where there is none (WebKitGTK's MiniBrowser).
    let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap();
    let manager = js_sys::Reflect::get(&navigator, &"storage".into()).unwrap();
    assert_eq!(answer.as_bool().is_some(), !manager.is_undefined());
    assert_eq!(answer.is_null(), manager.is_undefined());
}

/// The client's own lock, against the gateway (tests/client_gateway.rs's helpers).
mod client_lock {
    use super::support::gateway_client::*;
    use super::support::memory_adapter;
    use wasm_bindgen_test::*;

    #[wasm_bindgen_test]
    async fn a_new_intent_is_locked_before_another_driver_can_see_it() {
        // Every browser engine has Web Locks (Node has none, where only an
        // explicit resume() drives, by design: this binary runs in browsers only).
        let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap();
        assert!(
            !js_sys::Reflect::get(&navigator, &"locks".into())
                .unwrap()
                .is_undefined(),
            "Web Locks (navigator.locks) are missing in this browser"
        );
        let adapter = memory_adapter(true);
        let ns = unique("fresh");
        let setup = client(json!({})).await;
        let id = unique("acct");
        settle(setup.send_and_wait(create(&id), None))
            .await
            .unwrap();
        fault(json!({"match": {"aggregateId": id}, "fault": "delay", "delayMs": 400, "times": 1}))
            .await;

        // This tab sends a new intent; its lock is asked for before its record is
        // written and collected only after the send.
        let first = std::rc::Rc::new(client_over(json!({"namespace": ns}), adapter.clone()).await);
        let sending = js_sys::Promise::new(&mut |resolve, _| {
            let first = first.clone();
            let command = lock(&id, 1);
            wasm_bindgen_futures::spawn_local(async move {
                let outcome = settle(first.send(command, None)).await.unwrap();
                resolve.call1(&JsValue::NULL, &outcome).unwrap();
            });
        });

        // Another driver over the same storage, as soon as the record is there.
        let other = client_over(json!({"namespace": ns}), adapter.clone()).await;
        let intent_id = loop {
            let listed = rust(&settle(other.intents()).await.unwrap());
            if let Some(intent) = listed.as_array().and_then(|l| l.first()) {
                break intent["intentId"].as_str().unwrap().to_owned();
            }
            sleep(1).await;
        };
        let report = rust(&settle(other.resume(None)).await.unwrap());
        assert_eq!(report["driven"].as_array().unwrap().len(), 0, "{report}");
        assert_eq!(report["busy"], json!([intent_id]), "{report}");

        let outcome = rust(&JsFuture::from(sending).await.unwrap());
        assert_eq!(outcome["status"], "succeeded", "{outcome}");
        let request_id = outcome["requestId"].as_str().unwrap();
        assert_eq!(stored("account", &id, request_id).await, 1);
    }

    /// Two clients over one IndexedDB journal fire bursts into one scope at
    /// once (each burst takes its places under one hold of the scope's lock):
    /// every intent gets a place of its own, and history holds each once, in
    /// the order of the places.
    #[wasm_bindgen_test]
    async fn two_bursts_into_one_scope_are_sent_once_each_in_the_order_of_their_places() {
        let ns = unique("burst");
        let options = json!({"namespace": ns, "storage": "indexedDB", "timeoutMs": 20000});
        let (a, b) = (client(options.clone()).await, client(options).await);
        let id = unique("acct");
        settle(a.send_and_wait(create(&id), None)).await.unwrap();
        let scope = json!({"scope": format!("account:{id}")});
        let mut calls = Vec::new();
        for n in 0..40 {
            let c = if n % 4 == 3 { &b } else { &a };
            calls.push(c.send(with(&lock(&id, 1), scope.clone()), None));
        }
        let mut sent = Vec::new();
        for call in calls {
            let outcome = rust(&settle(call).await.unwrap());
            assert_eq!(outcome["status"], "succeeded", "{outcome}");
            sent.push(outcome["requestId"].as_str().unwrap().to_owned());
        }
        let listed = rust(&settle(a.intents()).await.unwrap());
        let mut placed: Vec<(u64, String)> = listed
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["scope"] == format!("account:{id}"))
            .map(|r| {
                let seq = r["scopeSeq"].as_u64().unwrap();
                (seq, r["requestId"].as_str().unwrap().to_owned())
            })
            .collect();
        placed.sort();
        let seqs: Vec<u64> = placed.iter().map(|(seq, _)| *seq).collect();
        assert_eq!(seqs, (1..=40).collect::<Vec<u64>>(), "one place each");
        let history = history(&id).await;
        let in_order: Vec<String> = placed.into_iter().map(|(_, r)| r).collect();
        assert_eq!(
            history[1..],
            in_order[..],
            "each once, in the order of the places"
        );
        sent.sort();
        let mut appended = history[1..].to_vec();
        appended.sort();
        assert_eq!(appended, sent);
        settle(a.clear()).await.unwrap();
    }
}
