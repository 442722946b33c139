//! Adapter storage and the in-memory store, in every JS runtime (Node too:
//! the adapter needs nothing from a browser).
#![cfg(target_arch = "wasm32")]

mod support;

use support::*;
use wasm_bindgen_test::*;
use wow_command_client::core::journal::{
    Journal, JournalError, SeededRandom, StoreError, Unavailable,
};
use wow_command_client::web::storage::AnyStore;

#[wasm_bindgen_test]
async fn adapters_meet_the_contract_with_and_without_compare_and_set() {
    for atomic in [false, true] {
        let adapter = memory_adapter(atomic);
        journal_contract(|| AnyStore::open(&adapter).unwrap()).await;
    }
}

#[wasm_bindgen_test]
async fn a_failing_adapter_refuses_before_sending() {
    for (name, kind) in [
        ("QuotaExceededError", Unavailable::QuotaExceeded),
        ("SecurityError", Unavailable::Blocked),
        ("TypeError", Unavailable::WriteFailed),
    ] {
        let journal = Journal::new(AnyStore::open(&failing_adapter(name)).unwrap(), "ns");
        let err = journal
            .begin(NOW, intent(None, "a"), &mut SeededRandom::new(2))
            .await
            .unwrap_err();
        match err {
            JournalError::Storage(StoreError::Unavailable { kind: got, detail }) => {
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
    let journal = Journal::new(AnyStore::open(&adapter).unwrap(), &ns);
    journal
        .begin(NOW, intent(None, "a"), &mut SeededRandom::new(4))
        .await
        .unwrap();
    let listing = journal.list().await.unwrap();
    assert_eq!(listing.records.len(), 1);
    assert_eq!(listing.quarantined.len(), 1);
    assert_eq!(listing.quarantined[0].key, format!("wow-intents/{ns}/bad"));
    assert!(adapter_raw_has(
        &adapter,
        &format!("wow-intents-quarantine/{ns}/bad")
    ));
    assert!(!adapter_raw_has(&adapter, &format!("wow-intents/{ns}/bad")));
    // Still reported on the next listing: never dropped silently.
    assert_eq!(journal.list().await.unwrap().quarantined.len(), 1);
    // A record written by a newer build is reported but left where it is.
    adapter_raw_set(
        &adapter,
        &format!("wow-intents/{ns}/future"),
        r#"{"schemaVersion":7}"#,
    );
    let listing = journal.list().await.unwrap();
    assert!(listing
        .quarantined
        .iter()
        .any(|q| q.key.ends_with("/future")));
    assert!(adapter_raw_has(
        &adapter,
        &format!("wow-intents/{ns}/future")
    ));
}

#[wasm_bindgen_test]
async fn memory_storage_is_an_explicit_opt_in_that_a_reload_forgets() {
    let journal = Journal::new(AnyStore::open(&"memory".into()).unwrap(), "ns");
    journal
        .begin(NOW, intent(Some("k"), "a"), &mut SeededRandom::new(5))
        .await
        .unwrap();
    assert!(journal.find("k").await.unwrap().is_some());
    let reloaded = Journal::new(AnyStore::open(&"memory".into()).unwrap(), "ns");
    assert!(reloaded.find("k").await.unwrap().is_none());
}
