//! Storage as the consumer (`IdempotentConsumer`) and the module's tests
//! use it, meeting the core's [`IntentStore`](crate::core::journal::IntentStore) contract over an object of
//! the storage-adapter contract (`key_value.rs`): IndexedDB (`idbKv` in
//! `indexed_db.js`), localStorage and memory (`builtin_kv.js`) and a
//! caller's adapter (edge KV). The command client does not come here: its
//! executor performs the engine's storage operations through `store.js`
//! (`src/web/executor.rs`).
//!
//! Unavailable, blocked, full or failing storage is a typed
//! [`StoreError::Unavailable`]: the send refuses before anything goes on
//! the wire. Unreadable entries are moved to a quarantine area and reported
//! by `list`, never dropped silently.

pub mod adapter;
pub mod indexed_db;
pub mod key_value;
pub mod stored;

use crate::core::text::text;
use wasm_bindgen::{JsCast, JsValue};

use super::JsFailure;

use crate::core::journal::{Listing, RecordStore, StoreError, StoredRecord, Unavailable};

pub use adapter::AdapterStore;
pub use stored::{record_from_js, record_from_stored, unavailable};

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/web/storage/builtin_kv.js")]
extern "C" {
    #[wasm_bindgen(js_name = localStorageKv, catch)]
    fn local_storage_kv() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = memoryKv)]
    fn memory_kv() -> JsValue;
}

/// The store chosen at run time by the client's `storage` option: each is
/// an object of the storage-adapter contract (IndexedDB's and the built-in
/// string stores' from this crate's snippets, or the caller's), driven by
/// one implementation ([`AdapterStore`]).
#[derive(Debug)]
pub struct AnyStore {
    store: AdapterStore,
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
        let builtin = |kv: JsValue, immediate: bool, compares_and_swaps: bool| {
            Ok(AnyStore {
                store: adapter::open(kv.unchecked_into(), 0, immediate, true)?,
                compares_and_swaps,
            })
        };
        match storage.as_string().as_deref() {
            None if storage.is_null_or_undefined() => {
                builtin(indexed_db::adapter(namespace).into(), false, true)
            }
            Some("indexedDB") => builtin(indexed_db::adapter(namespace).into(), false, true),
            Some("localStorage") => {
                let kv = local_storage_kv().map_err(|e| unavailable(JsFailure::from(e), false))?;
                if kv.is_null_or_undefined() {
                    return Err(StoreError::Unavailable {
                        kind: Unavailable::Missing,
                        detail: "localStorage is not available here".into(),
                    });
                }
                builtin(kv, true, false)
            }
            Some("memory") => builtin(memory_kv(), true, true),
            Some(other) => Err(StoreError::Unavailable {
                kind: Unavailable::Missing,
                detail: text!(
                    "unknown storage `",
                    other,
                    "`: use 'indexedDB', 'localStorage', 'memory' or an adapter"
                ),
            }),
            None => {
                let store = adapter::open(
                    storage.clone().unchecked_into(),
                    callback_timeout_ms,
                    false,
                    false,
                )?;
                let compares_and_swaps = store.kv().has_compare_and_set();
                Ok(AnyStore {
                    store,
                    compares_and_swaps,
                })
            }
        }
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
        self.store.kv().is_builtin()
    }
}

impl<R: StoredRecord> RecordStore<R> for AnyStore {
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<R>, StoreError> {
        self.store.get(namespace, id).await
    }
    async fn put(&self, record: &R) -> Result<u64, StoreError> {
        self.store.put(record).await
    }
    async fn delete(&self, namespace: &str, id: &str) -> Result<(), StoreError> {
        RecordStore::<R>::delete(&self.store, namespace, id).await
    }
    async fn list(&self, namespace: &str) -> Result<Listing<R>, StoreError> {
        self.store.list(namespace).await
    }
    async fn list_where(
        &self,
        namespace: &str,
        only: (&str, &str),
    ) -> Result<Listing<R>, StoreError> {
        self.store.list_where(namespace, only).await
    }
    async fn delete_many(&self, namespace: &str, ids: &[&str]) -> Result<(), StoreError> {
        RecordStore::<R>::delete_many(&self.store, namespace, ids).await
    }
}
