//! The `RecordStore` contract every backend meets (IndexedDB, localStorage,
//! a caller's adapter, memory) for every kind of durable record (intents,
//! consumer effects), and the in-memory implementation.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::record::{IntentRecord, RecordError};
use crate::protocol::{FromJson, ToJson};
use crate::text::text;

/// The kinds of durable records; each has its own area in every backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecordKind {
    /// Business intents of the command client ([`IntentRecord`]).
    Intent,
    /// Side effects of idempotent consumers.
    Effect,
}

impl RecordKind {
    /// The key prefix of a namespace's records: `wow-<area>/<namespace>/`,
    /// in every backend (IndexedDB's too, whose keys are the ids).
    pub fn prefix(self, namespace: &str) -> String {
        let area = match self {
            RecordKind::Intent => "wow-intents/",
            RecordKind::Effect => "wow-effects/",
        };
        text!(area, namespace, "/")
    }

    /// A record's key: `wow-<area>/<namespace>/<id>`.
    pub fn key(self, namespace: &str, id: &str) -> String {
        let mut key = self.prefix(namespace);
        key.push_str(id);
        key
    }

    /// The key prefix of a namespace's entries moved aside as unreadable:
    /// `wow-<area>-quarantine/<namespace>/`.
    pub fn aside_prefix(self, namespace: &str) -> String {
        let area = match self {
            RecordKind::Intent => "wow-intents-quarantine/",
            RecordKind::Effect => "wow-effects-quarantine/",
        };
        text!(area, namespace, "/")
    }
}

/// A record a [`RecordStore`] can hold: keyed by namespace and id, written by
/// compare-and-swap on its revision, schema-checked when read.
pub trait StoredRecord: Clone + Serialize + DeserializeOwned + ToJson + FromJson + 'static {
    /// Its kind.
    const KIND: RecordKind;
    /// Storage namespace.
    fn namespace(&self) -> &str;
    /// Id within the namespace.
    fn id(&self) -> &str;
    /// Compare-and-swap revision: 0 before the first write.
    fn revision(&self) -> u64;
    /// Sets the revision.
    fn set_revision(&mut self, revision: u64);
    /// Accepts the stored `schemaVersion`, or says why the entry cannot be read.
    fn check_schema(version: Option<u64>) -> Result<(), RecordError>;
    /// Whether this write must reach the disk before it counts (IndexedDB's
    /// strict durability), or may settle in the store's own time: a record
    /// whose loss to a power cut would lose or misreport an intent must.
    fn needs_flush(&self) -> bool {
        true
    }
}

impl StoredRecord for IntentRecord {
    const KIND: RecordKind = RecordKind::Intent;
    fn namespace(&self) -> &str {
        &self.namespace
    }
    fn id(&self) -> &str {
        &self.intent_id
    }
    fn revision(&self) -> u64 {
        self.revision
    }
    fn set_revision(&mut self, revision: u64) {
        IntentRecord::set_revision(self, revision);
    }
    fn check_schema(version: Option<u64>) -> Result<(), RecordError> {
        super::record::check_schema(version)
    }
    /// Every state but `succeeded` is flushed: unresolved intents carry the
    /// requestId a retry must reuse, and a lost `rejected` or `conflict`
    /// would let `resume()` send again what the caller was told failed. A
    /// lost `succeeded` is harmless: the intent is back to `sending`, and
    /// `resume()` resends its requestId, meets `DuplicateRequestId` and
    /// confirms the same append from history.
    fn needs_flush(&self) -> bool {
        self.state != super::record::IntentState::Succeeded
    }
}

/// The record to store for a compare-and-swap `put`: one revision on.
pub fn next_revision<R: StoredRecord>(record: &R) -> R {
    let mut next = record.clone();
    next.set_revision(record.revision() + 1);
    next
}

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

impl Unavailable {
    /// The way storage is unavailable that an exception named `name`
    /// (a `DOMException`'s, or an adapter's error's) means.
    #[inline]
    pub fn of(name: &str, writing: bool) -> Unavailable {
        match name {
            "QuotaExceededError" | "NS_ERROR_DOM_QUOTA_REACHED" => Unavailable::QuotaExceeded,
            "SecurityError" | "InvalidStateError" | "NotAllowedError" | "UnknownError" => {
                Unavailable::Blocked
            }
            "NotSupportedError" | "ReferenceError" => Unavailable::Missing,
            _ if writing => Unavailable::WriteFailed,
            _ => Unavailable::ReadFailed,
        }
    }

    /// Its name, for messages.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Unavailable::Missing => "Missing",
            Unavailable::Blocked => "Blocked",
            Unavailable::QuotaExceeded => "QuotaExceeded",
            Unavailable::ReadFailed => "ReadFailed",
            Unavailable::WriteFailed => "WriteFailed",
        }
    }
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

impl StoreError {
    /// The message (what `Display` writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        use crate::text::text;
        match self {
            // No `Debug` in messages: the shipped module is built without it
            // (`-Zfmt-debug=none`), so every word here is written out.
            StoreError::Unavailable { kind, detail } => {
                text!("intent storage unavailable (", kind.as_str(), "): ", detail)
            }
            StoreError::Conflict { current: Some(at) } => text!(
                "intent record changed concurrently (now at revision ",
                at,
                ")"
            ),
            StoreError::Conflict { current: None } => {
                "intent record changed concurrently (it is gone)".into()
            }
        }
    }
}

impl ::core::fmt::Display for StoreError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(&self.message())
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

/// `QuarantinedEntry` in the `.d.ts`: the key and the reason's text.
impl ToJson for Quarantined {
    fn write_json(&self, out: &mut crate::protocol::JsonOut) {
        crate::protocol::ObjectWriter::new(out)
            .put("key", &self.key)
            .put("reason", &self.reason.message())
            .done();
    }
}

/// The records of a namespace, and what had to be quarantined.
#[derive(Clone, Debug, PartialEq)]
pub struct Listing<R = IntentRecord> {
    /// Readable records.
    pub records: Vec<R>,
    /// Unreadable entries.
    pub quarantined: Vec<Quarantined>,
    /// Records of other users seen, left out.
    pub others: usize,
}

impl<R> Default for Listing<R> {
    fn default() -> Self {
        Listing {
            records: Vec::new(),
            quarantined: Vec::new(),
            others: 0,
        }
    }
}

/// Durable record storage.
///
/// `put` is a compare-and-swap on the record's revision: it succeeds only if
/// the stored revision equals it (0: the record must not exist yet), stores
/// the record at `revision + 1` and returns that. A backend that cannot
/// compare-and-swap atomically must say so in its docs; the Web Locks around
/// each intent then carry the exclusion.
#[allow(async_fn_in_trait)]
pub trait RecordStore<R: StoredRecord> {
    /// One record, if present and readable.
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<R>, StoreError>;
    /// Compare-and-swap write; returns the new revision.
    async fn put(&self, record: &R) -> Result<u64, StoreError>;
    /// Removes a record (absent is fine).
    async fn delete(&self, namespace: &str, id: &str) -> Result<(), StoreError>;
    /// Every record of a namespace, quarantining unreadable entries.
    async fn list(&self, namespace: &str) -> Result<Listing<R>, StoreError>;
    /// The records of a namespace whose string field `only.0` is `only.1`,
    /// and perhaps others (the caller filters again): a backend holding
    /// objects skips the rest without decoding them. All by default.
    async fn list_where(
        &self,
        namespace: &str,
        only: (&str, &str),
    ) -> Result<Listing<R>, StoreError> {
        let _ = only;
        self.list(namespace).await
    }
    /// Removes many records (pruning, sign-out); a backend with transactions
    /// does it in one.
    async fn delete_many(&self, namespace: &str, ids: &[&str]) -> Result<(), StoreError> {
        for id in ids {
            self.delete(namespace, id).await?;
        }
        Ok(())
    }
}

/// In-memory storage: explicit opt-in only (tests, short-lived workers),
/// because it does not survive a reload. A list scanned in order: it holds
/// what one process writes, and a map's tree code would be most of its size
/// in the wasm module.
#[derive(Debug, Default)]
pub struct MemoryStore {
    records: RefCell<Vec<(MemoryKey, Rc<dyn Any>)>>,
}

/// Kind, namespace, id.
type MemoryKey = (RecordKind, String, String);

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

fn memory_key<R: StoredRecord>(namespace: &str, id: &str) -> MemoryKey {
    (R::KIND, namespace.to_owned(), id.to_owned())
}

fn position(records: &[(MemoryKey, Rc<dyn Any>)], key: &MemoryKey) -> Option<usize> {
    records.iter().position(|(k, _)| k == key)
}

fn downcast<R: StoredRecord>(stored: &Rc<dyn Any>) -> R {
    stored
        .downcast_ref::<R>()
        .expect("one record type per kind")
        .clone()
}

impl<R: StoredRecord> RecordStore<R> for MemoryStore {
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<R>, StoreError> {
        let key = memory_key::<R>(namespace, id);
        let records = self.records.borrow();
        Ok(position(&records, &key).map(|i| downcast(&records[i].1)))
    }

    async fn put(&self, record: &R) -> Result<u64, StoreError> {
        let key = memory_key::<R>(record.namespace(), record.id());
        let mut records = self.records.borrow_mut();
        let at = position(&records, &key);
        let current = at.map(|i| downcast::<R>(&records[i].1).revision());
        if current.unwrap_or(0) != record.revision() {
            return Err(StoreError::Conflict { current });
        }
        let stored = next_revision(record);
        let revision = stored.revision();
        match at {
            Some(i) => records[i].1 = Rc::new(stored),
            None => records.push((key, Rc::new(stored))),
        }
        Ok(revision)
    }

    async fn delete(&self, namespace: &str, id: &str) -> Result<(), StoreError> {
        let key = memory_key::<R>(namespace, id);
        self.records.borrow_mut().retain(|(k, _)| *k != key);
        Ok(())
    }

    async fn list(&self, namespace: &str) -> Result<Listing<R>, StoreError> {
        let records = self
            .records
            .borrow()
            .iter()
            .filter(|((kind, ns, _), _)| *kind == R::KIND && ns == namespace)
            .map(|(_, r)| downcast(r))
            .collect();
        Ok(Listing {
            others: 0,
            records,
            quarantined: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Unavailable;

    #[test]
    fn an_exception_names_how_storage_is_unavailable() {
        assert_eq!(
            Unavailable::of("QuotaExceededError", true),
            Unavailable::QuotaExceeded
        );
        assert_eq!(
            Unavailable::of("NS_ERROR_DOM_QUOTA_REACHED", false),
            Unavailable::QuotaExceeded
        );
        assert_eq!(
            Unavailable::of("SecurityError", false),
            Unavailable::Blocked
        );
        assert_eq!(
            Unavailable::of("NotSupportedError", true),
            Unavailable::Missing
        );
        assert_eq!(Unavailable::of("TypeError", true), Unavailable::WriteFailed);
        assert_eq!(Unavailable::of("TypeError", false), Unavailable::ReadFailed);
    }
}
