//! Intent storage over any key-value store (IndexedDB, localStorage,
//! memory, a caller's adapter): one implementation of the key layout,
//! compare-and-swap and quarantine for all of them. Values are written as
//! JSON text; a store may hand a record back as the object it keeps
//! (IndexedDB).
//!
//! Records live under `wow-<area>/<namespace>/<id>` (`wow-intents/…`,
//! `wow-effects/…`); unreadable entries are moved under
//! `wow-<area>-quarantine/…`.

use wasm_bindgen::JsValue;

use super::stored::record_from_stored;
use crate::core::journal::{
    next_revision, Listing, Quarantined, RecordError, RecordKind, RecordStore, StoreError,
    StoredRecord, Unavailable,
};
use crate::core::text::text;

/// The key prefix of a kind's records.
pub fn prefix(kind: RecordKind) -> String {
    text!("wow-", kind.area(), "/")
}

/// The key prefix of a kind's quarantined entries.
pub fn quarantine_prefix(kind: RecordKind) -> String {
    text!("wow-", kind.area(), "-quarantine/")
}

/// A key-value store: values go in as JSON text (a string) and come back
/// as a string or as the object the store keeps.
#[allow(async_fn_in_trait)]
pub trait KeyValue {
    /// The value of `key`.
    async fn read(&self, key: &str) -> Result<Option<JsValue>, StoreError>;
    /// Sets `key`.
    async fn write(&self, key: &str, value: &JsValue) -> Result<(), StoreError>;
    /// Removes `key`.
    async fn remove(&self, key: &str) -> Result<(), StoreError>;
    /// Removes every key, in one batch where the store has one.
    async fn remove_many(&self, keys: &[String]) -> Result<(), StoreError>;
    /// The entries under `prefix`; a value may be left out (`None`) and is then read.
    async fn entries(&self, prefix: &str) -> Result<Vec<(String, Option<JsValue>)>, StoreError>;
    /// An atomic compare-and-swap of the stored revision, where the store has
    /// one: `Some(swapped)`; `None` when it has not. `flush`: durable before
    /// it resolves.
    async fn compare_and_set(
        &self,
        key: &str,
        expected: u64,
        value: &JsValue,
        flush: bool,
    ) -> Result<Option<bool>, StoreError>;
}

/// Intent storage over a [`KeyValue`].
#[derive(Debug)]
pub struct KeyValueStore<K> {
    kv: K,
}

impl<K: KeyValue> KeyValueStore<K> {
    /// Wraps a key-value store.
    pub fn new(kv: K) -> KeyValueStore<K> {
        KeyValueStore { kv }
    }

    /// The wrapped store.
    pub fn kv(&self) -> &K {
        &self.kv
    }

    /// Moves an unreadable entry aside; a record from a newer build stays put.
    async fn quarantine(
        &self,
        kind: RecordKind,
        key: &str,
        value: &JsValue,
        reason: &RecordError,
    ) -> Result<(), StoreError> {
        if matches!(reason, RecordError::FutureSchema(_)) {
            return Ok(());
        }
        let own = prefix(kind);
        let aside = text!(
            quarantine_prefix(kind),
            key.strip_prefix(own.as_str()).unwrap_or(key)
        );
        self.kv.write(&aside, value).await?;
        self.kv.remove(key).await
    }
}

fn key_of(kind: RecordKind, namespace: &str, id: &str) -> String {
    text!(prefix(kind), namespace, "/", id)
}

impl<K: KeyValue, R: StoredRecord> RecordStore<R> for KeyValueStore<K> {
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<R>, StoreError> {
        let key = key_of(R::KIND, namespace, id);
        let Some(value) = self.kv.read(&key).await? else {
            return Ok(None);
        };
        match record_from_stored(value.clone()) {
            Ok(record) => Ok(Some(record)),
            Err(reason) => {
                self.quarantine(R::KIND, &key, &value, &reason).await?;
                Err(StoreError::Unavailable {
                    kind: Unavailable::ReadFailed,
                    detail: text!(key, ": ", reason.message()),
                })
            }
        }
    }

    /// Without an atomic compare-and-swap in the store, this reads, compares
    /// and writes; across tabs and workers the intent's lock keeps one
    /// writer. The built-in stores (localStorage, memory) swap in one
    /// synchronous JS call, so nothing in the tab runs in between; IndexedDB
    /// in one transaction. A swap refused is followed by a read, so the
    /// conflict says what was found.
    async fn put(&self, record: &R) -> Result<u64, StoreError> {
        let key = key_of(R::KIND, record.namespace(), record.id());
        let next = next_revision(record);
        // One string crosses into JS, written by the core.
        let text = JsValue::from_str(&crate::web::to_text(&next));
        let swapped = self
            .kv
            .compare_and_set(&key, record.revision(), &text, record.needs_flush())
            .await?;
        if swapped == Some(true) {
            return Ok(next.revision());
        }
        let current = self
            .kv
            .read(&key)
            .await?
            .map(|stored| record_from_stored::<R>(stored).map_or(u64::MAX, |r| r.revision()));
        if swapped == Some(false) || current.unwrap_or(0) != record.revision() {
            return Err(StoreError::Conflict { current });
        }
        self.kv.write(&key, &text).await?;
        Ok(next.revision())
    }

    async fn delete(&self, namespace: &str, id: &str) -> Result<(), StoreError> {
        self.kv.remove(&key_of(R::KIND, namespace, id)).await
    }

    async fn delete_many(&self, namespace: &str, ids: &[&str]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = ids
            .iter()
            .map(|id| key_of(R::KIND, namespace, id))
            .collect();
        self.kv.remove_many(&keys).await
    }

    /// An entry held as an object (IndexedDB's) whose `only.0` is not the
    /// string `only.1` is skipped before it is decoded; an unreadable one is
    /// left to the full listing, which quarantines it.
    async fn list_where(
        &self,
        namespace: &str,
        only: (&str, &str),
    ) -> Result<Listing<R>, StoreError> {
        let mut listing = Listing::default();
        for (_, value) in self
            .kv
            .entries(&text!(prefix(R::KIND), namespace, "/"))
            .await?
        {
            let Some(value) = value else {
                return self.list(namespace).await;
            };
            let other = value.is_object()
                && crate::web::safe_read::get(&value, only.0)
                    .and_then(|v| v.as_string())
                    .as_deref()
                    != Some(only.1);
            if other {
                continue;
            }
            if let Ok(record) = record_from_stored(value) {
                listing.records.push(record);
            }
        }
        Ok(listing)
    }

    async fn list(&self, namespace: &str) -> Result<Listing<R>, StoreError> {
        let mut listing = Listing::default();
        let aside = text!(quarantine_prefix(R::KIND), namespace, "/");
        for (key, _) in self.kv.entries(&aside).await? {
            listing.quarantined.push(Quarantined {
                key,
                reason: RecordError::Corrupt("quarantined earlier".into()),
            });
        }
        let own = text!(prefix(R::KIND), namespace, "/");
        for (key, value) in self.kv.entries(&own).await? {
            let value = match value {
                Some(v) => v,
                None => match self.kv.read(&key).await? {
                    Some(v) => v,
                    None => continue,
                },
            };
            match record_from_stored(value.clone()) {
                Ok(record) => listing.records.push(record),
                Err(reason) => {
                    self.quarantine(R::KIND, &key, &value, &reason).await?;
                    listing.quarantined.push(Quarantined { key, reason });
                }
            }
        }
        Ok(listing)
    }
}
