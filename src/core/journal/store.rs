//! The `IntentStore` contract every backend meets (IndexedDB, localStorage,
//! a caller's adapter, memory), and the in-memory implementation.

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::record::{IntentRecord, RecordError};

/// Why storage cannot be used. Any of these makes a send refuse before
/// anything goes on the wire: no durable requestId, no send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// The API is missing in this runtime.
    Missing,
    /// The browser refused it (private mode, blocked by settings or an upgrade).
    Blocked,
    /// The quota is exhausted (`QuotaExceededError`).
    QuotaExceeded,
    /// A read failed.
    ReadFailed,
    /// A write failed or was not confirmed durable.
    WriteFailed,
}

/// A store failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// Storage cannot be used.
    Unavailable {
        /// Which way.
        kind: Unavailable,
        /// What the runtime said (`{name}: {message}` of a JS exception).
        detail: String,
    },
    /// Compare-and-swap lost: the record is not at the expected revision
    /// (or, for a new record, already exists).
    Conflict {
        /// The revision found, if the record exists.
        current: Option<u64>,
    },
}

impl ::core::fmt::Display for StoreError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        match self {
            StoreError::Unavailable { kind, detail } => {
                write!(f, "intent storage unavailable ({kind:?}): {detail}")
            }
            StoreError::Conflict { current } => {
                write!(f, "intent record changed concurrently (now at {current:?})")
            }
        }
    }
}

/// A stored entry that could not be read; moved aside, never dropped silently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quarantined {
    /// Its storage key.
    pub key: String,
    /// Why it could not be read.
    pub reason: RecordError,
}

/// The records of a namespace, and what had to be quarantined.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Listing {
    /// Readable records.
    pub records: Vec<IntentRecord>,
    /// Unreadable entries.
    pub quarantined: Vec<Quarantined>,
}

/// Durable intent storage.
///
/// `put` is a compare-and-swap on `record.revision`: it succeeds only if the
/// stored revision equals it (0: the record must not exist yet), stores the
/// record at `revision + 1` and returns that. A backend that cannot
/// compare-and-swap atomically must say so in its docs; the Web Locks around
/// each intent then carry the exclusion.
#[allow(async_fn_in_trait)]
pub trait IntentStore {
    /// One record, if present and readable.
    async fn get(
        &self,
        namespace: &str,
        intent_id: &str,
    ) -> Result<Option<IntentRecord>, StoreError>;
    /// Compare-and-swap write; returns the new revision.
    async fn put(&self, record: &IntentRecord) -> Result<u64, StoreError>;
    /// Removes a record (absent is fine).
    async fn delete(&self, namespace: &str, intent_id: &str) -> Result<(), StoreError>;
    /// Every record of a namespace, quarantining unreadable entries.
    async fn list(&self, namespace: &str) -> Result<Listing, StoreError>;
}

/// In-memory storage: explicit opt-in only (tests, short-lived workers),
/// because it does not survive a reload.
#[derive(Debug, Default)]
pub struct MemoryStore {
    records: RefCell<BTreeMap<(String, String), IntentRecord>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

impl IntentStore for MemoryStore {
    async fn get(
        &self,
        namespace: &str,
        intent_id: &str,
    ) -> Result<Option<IntentRecord>, StoreError> {
        let key = (namespace.to_owned(), intent_id.to_owned());
        Ok(self.records.borrow().get(&key).cloned())
    }

    async fn put(&self, record: &IntentRecord) -> Result<u64, StoreError> {
        let key = (record.namespace.clone(), record.intent_id.clone());
        let mut records = self.records.borrow_mut();
        let current = records.get(&key).map(|r| r.revision);
        if current.unwrap_or(0) != record.revision {
            return Err(StoreError::Conflict { current });
        }
        let mut stored = record.clone();
        stored.revision += 1;
        let revision = stored.revision;
        records.insert(key, stored);
        Ok(revision)
    }

    async fn delete(&self, namespace: &str, intent_id: &str) -> Result<(), StoreError> {
        let key = (namespace.to_owned(), intent_id.to_owned());
        self.records.borrow_mut().remove(&key);
        Ok(())
    }

    async fn list(&self, namespace: &str) -> Result<Listing, StoreError> {
        let records = self
            .records
            .borrow()
            .iter()
            .filter(|((ns, _), _)| ns == namespace)
            .map(|(_, r)| r.clone())
            .collect();
        Ok(Listing {
            records,
            quarantined: Vec::new(),
        })
    }
}
