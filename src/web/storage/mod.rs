//! Storage: the one store every part of the module writes through
//! (`store.js`: the key layout's compare-and-swap, listing and quarantine
//! over an object of the storage-adapter contract), chosen by the
//! `storage` option. The command client's executor performs the engine's
//! storage operations on it (`src/web/executor.rs`); the consumer
//! (`IdempotentConsumer`) and the module's tests reach the same store
//! through [`AnyStore`], the core's [`RecordStore`] contract.
//!
//! The storage-adapter contract, which IndexedDB (`idbKv` in
//! `indexed_db.js`), localStorage and memory (`builtin_kv.js`) meet too:
//!
//! ```js
//! {
//!   async get(key)            // → string | null
//!   async set(key, value)     // value: string
//!   async delete(key)
//!   async list(prefix)        // → [key, …] or [[key, value], …]
//!   async compareAndSet(key, expectedRevision, value, flush)  // optional → boolean
//!   async deleteMany(keys)    // optional: one batch
//! }
//! ```
//!
//! `flush` says the write must be durable before it resolves; a store that
//! is always durable ignores it. With `compareAndSet` (a Durable Object, a
//! database row) writes are atomic compare-and-swaps; without it a write
//! reads, compares and writes, so the per-intent lock (or the runtime's
//! single writer) must keep one driver per intent. Unavailable, blocked,
//! full or failing storage is a typed [`StoreError::Unavailable`]: the send
//! refuses before anything goes on the wire. Unreadable entries are moved
//! to a quarantine area and reported by `list`, never dropped silently.

pub mod indexed_db;
pub mod stored;

use crate::core::text::text;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::JsFailure;

use crate::core::journal::{
    next_revision, Listing, Quarantined, RecordError, RecordKind, RecordStore, StoreError,
    StoredRecord, Unavailable,
};

pub use stored::{record_from_js, record_from_stored, unavailable};

#[wasm_bindgen(module = "/src/web/storage/builtin_kv.js")]
extern "C" {
    #[wasm_bindgen(js_name = localStorageKv, catch)]
    fn local_storage_kv() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = memoryKv)]
    fn memory_kv() -> JsValue;
}

#[wasm_bindgen(module = "/src/web/storage/store.js")]
extern "C" {
    /// The journal's store over a key-value object (`store.js`).
    #[derive(Debug, Clone)]
    pub type Store;
    #[wasm_bindgen(js_name = openStore, catch)]
    fn open_store(
        kv: &JsValue,
        builtin: bool,
        immediate: bool,
        timeout_ms: u32,
    ) -> Result<Store, JsValue>;
    /// One of the built-in stores: shared only under the runtime's Web Locks.
    #[wasm_bindgen(method, getter)]
    fn builtin(this: &Store) -> bool;
    /// Whether the store has `compareAndSet`.
    #[wasm_bindgen(method, getter)]
    fn swaps(this: &Store) -> bool;
    #[wasm_bindgen(method)]
    fn get(this: &Store, key: &str) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    fn list(this: &Store, prefix: &str) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    fn put(this: &Store, key: &str, text: &str, expected: f64, flush: bool) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    fn remove(this: &Store, keys: js_sys::Array) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    fn aside(this: &Store, from: &str, to: &str, reason: &str) -> js_sys::Promise;
}

/// The store the `storage` option names: IndexedDB by default,
/// `localStorage`, `memory` (by explicit opt-in), or a caller's adapter
/// (each of its operations bounded by `within_ms`; 0: unbounded).
pub fn open(storage: &JsValue, within_ms: u32, namespace: &str) -> Result<Store, StoreError> {
    let missing = |detail: String| StoreError::Unavailable {
        kind: Unavailable::Missing,
        detail,
    };
    let (kv, builtin, immediate) = match storage.as_string().as_deref() {
        None if storage.is_null_or_undefined() => {
            (indexed_db::adapter(namespace).into(), true, false)
        }
        Some("indexedDB") => (indexed_db::adapter(namespace).into(), true, false),
        Some("localStorage") => {
            let kv = local_storage_kv().map_err(|e| unavailable(JsFailure::from(e), false))?;
            if kv.is_null_or_undefined() {
                return Err(missing("localStorage is not available here".into()));
            }
            (kv, true, true)
        }
        Some("memory") => (memory_kv(), true, true),
        Some(other) => {
            return Err(missing(text!(
                "unknown storage `",
                other,
                "`: use 'indexedDB', 'localStorage', 'memory' or an adapter"
            )))
        }
        None => (storage.clone(), false, false),
    };
    let timeout = if builtin { 0 } else { within_ms };
    open_store(&kv, builtin, immediate, timeout).map_err(|e| missing(JsFailure::from(e).message))
}

/// The store as the core's [`RecordStore`] of any kind of record, for
/// the consumer and the tests: the same operations the client's executor
/// performs, awaited here.
#[derive(Debug)]
pub struct AnyStore {
    store: Store,
    /// See [`AnyStore::compares_and_swaps`].
    compares_and_swaps: bool,
}

impl AnyStore {
    /// Opens a backend by name (`indexedDB`, `localStorage`, `memory`) or
    /// wraps an adapter object, for `namespace`'s records, with the default
    /// bound on an adapter's operations.
    pub fn open(storage: &JsValue, namespace: &str) -> Result<AnyStore, StoreError> {
        AnyStore::open_within(storage, super::DEFAULT_CALLBACK_TIMEOUT_MS, namespace)
    }

    /// [`AnyStore::open`], an adapter's every operation bounded by
    /// `callback_timeout_ms` (0: unbounded): one that does not settle in
    /// time is `StorageUnavailable`.
    pub fn open_within(
        storage: &JsValue,
        callback_timeout_ms: u32,
        namespace: &str,
    ) -> Result<AnyStore, StoreError> {
        let store = open(storage, callback_timeout_ms, namespace)?;
        // localStorage's swap is atomic within its tab only.
        let compares_and_swaps =
            store.swaps() && storage.as_string().as_deref() != Some("localStorage");
        Ok(AnyStore {
            store,
            compares_and_swaps,
        })
    }

    /// Whether a write is an atomic compare-and-swap, so that of two
    /// processes racing on one record exactly one wins: IndexedDB (a
    /// transaction), memory (one process), an adapter with `compareAndSet`.
    /// localStorage (within a tab only) and an adapter without it do not.
    pub fn compares_and_swaps(&self) -> bool {
        self.compares_and_swaps
    }

    /// Whether everything that shares this store shares the runtime's Web
    /// Locks too, so that holding a lock excludes every other writer: an
    /// origin's IndexedDB and localStorage (locks span its tabs and
    /// workers) and memory. Not a caller's adapter: an edge KV, a Deno KV
    /// or a directory is shared by processes whose locks are their own.
    pub fn shared_only_under_locks(&self) -> bool {
        self.store.builtin()
    }

    /// The entries under `prefix`, as `[key, value]` pairs.
    async fn entries(&self, prefix: &str) -> Result<Vec<JsValue>, StoreError> {
        let found = settled(self.store.list(prefix), false).await?;
        Ok(super::safe_read::elements(&found).unwrap_or_default())
    }

    /// Moves an unreadable entry aside, kept with why; a record from a
    /// newer build stays put.
    async fn quarantine(
        &self,
        kind: RecordKind,
        (namespace, key): (&str, &str),
        reason: &RecordError,
    ) -> Result<(), StoreError> {
        if matches!(reason, RecordError::FutureSchema(_)) {
            return Ok(());
        }
        let own = kind.prefix(namespace);
        let to = text!(
            kind.aside_prefix(namespace),
            key.strip_prefix(own.as_str()).unwrap_or(key)
        );
        settled(self.store.aside(key, &to, &reason.message()), true)
            .await
            .map(drop)
    }
}

/// A store operation's promise, its failure the way storage is unavailable.
async fn settled(promise: js_sys::Promise, writing: bool) -> Result<JsValue, StoreError> {
    JsFuture::from(promise)
        .await
        .map_err(|e| unavailable(JsFailure::from(e), writing))
}

/// The parts of a listed `[key, value]` pair.
fn pair(entry: &JsValue) -> Option<(String, JsValue)> {
    let pair = super::safe_read::elements(entry)?;
    Some((pair.first()?.as_string()?, pair.get(1)?.clone()))
}

impl<R: StoredRecord> RecordStore<R> for AnyStore {
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<R>, StoreError> {
        let key = R::KIND.key(namespace, id);
        let value = settled(self.store.get(&key), false).await?;
        if value.is_null_or_undefined() {
            return Ok(None);
        }
        match record_from_stored(value) {
            Ok(record) => Ok(Some(record)),
            Err(reason) => {
                self.quarantine(R::KIND, (namespace, &key), &reason).await?;
                Err(StoreError::Unavailable {
                    kind: Unavailable::ReadFailed,
                    detail: text!(key, ": ", reason.message()),
                })
            }
        }
    }

    /// A compare-and-swap (`store.js`'s `put`); a swap refused says the
    /// revision found (absent: none; unreadable: `u64::MAX`).
    async fn put(&self, record: &R) -> Result<u64, StoreError> {
        let key = R::KIND.key(record.namespace(), record.id());
        let next = next_revision(record);
        // One string crosses into JS, written by the core.
        let text = super::to_text(&next);
        let put = self
            .store
            .put(&key, &text, record.revision() as f64, record.needs_flush());
        let swapped = settled(put, true).await?;
        if swapped.as_bool() == Some(true) {
            return Ok(next.revision());
        }
        let current = swapped
            .as_f64()
            .map(|found| if found < 0.0 { u64::MAX } else { found as u64 });
        Err(StoreError::Conflict { current })
    }

    async fn delete(&self, namespace: &str, id: &str) -> Result<(), StoreError> {
        RecordStore::<R>::delete_many(self, namespace, &[id]).await
    }

    async fn delete_many(&self, namespace: &str, ids: &[&str]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let keys: js_sys::Array = ids
            .iter()
            .map(|id| JsValue::from_str(&R::KIND.key(namespace, id)))
            .collect();
        settled(self.store.remove(keys), true).await.map(drop)
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
        for entry in self.entries(&R::KIND.prefix(namespace)).await? {
            let Some((_, value)) = pair(&entry) else {
                continue;
            };
            let other = value.is_object()
                && super::safe_read::get(&value, only.0)
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
        let aside = R::KIND.aside_prefix(namespace);
        for (key, value) in self.entries(&aside).await?.iter().filter_map(pair) {
            // Kept with why (`{ quarantinedFor, value }`), or as it was found.
            let reason = match record_from_stored::<R>(value) {
                Err(reason @ RecordError::Corrupt(_)) => reason,
                _ => RecordError::Corrupt("quarantined earlier".into()),
            };
            listing.quarantined.push(Quarantined { key, reason });
        }
        let own = R::KIND.prefix(namespace);
        for (key, value) in self.entries(&own).await?.iter().filter_map(pair) {
            match record_from_stored(value) {
                Ok(record) => listing.records.push(record),
                Err(reason) => {
                    self.quarantine(R::KIND, (namespace, &key), &reason).await?;
                    listing.quarantined.push(Quarantined { key, reason });
                }
            }
        }
        Ok(listing)
    }
}
