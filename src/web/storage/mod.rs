//! Intent storage backends for browsers and edge runtimes, all meeting the
//! core's [`IntentStore`] contract: IndexedDB (the default in browsers), and
//! string key-value stores behind the storage-adapter contract: a caller's
//! adapter (edge KV), localStorage and memory (by explicit opt-in), the last
//! two as small JS objects (`builtin_kv.js`), so one Rust implementation
//! serves every text store and the module carries two backends, not four.
//!
//! Unavailable, blocked, full or failing storage is a typed
//! [`StoreError::Unavailable`]: the send refuses before anything goes on
//! the wire. Unreadable entries are moved to a quarantine area and reported
//! by `list`, never dropped silently.

pub mod adapter;
pub mod indexed_db;
pub mod text_kv;

use crate::core::text::text;
use wasm_bindgen::{JsCast, JsValue};

use super::{json_from_js, json_to_js, JsFailure};

use crate::core::journal::{
    Listing, RecordError, RecordStore, StoreError, StoredRecord, Unavailable,
};

pub use adapter::AdapterStore;
pub use indexed_db::IndexedDbStore;

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/web/storage/builtin_kv.js")]
extern "C" {
    #[wasm_bindgen(js_name = localStorageKv, catch)]
    fn local_storage_kv() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = memoryKv)]
    fn memory_kv() -> JsValue;
}

/// Maps a JS exception to the way storage is unavailable.
pub fn unavailable(failure: JsFailure, writing: bool) -> StoreError {
    let kind = match failure.name.as_str() {
        "QuotaExceededError" | "NS_ERROR_DOM_QUOTA_REACHED" => Unavailable::QuotaExceeded,
        "SecurityError" | "InvalidStateError" | "NotAllowedError" | "UnknownError" => {
            Unavailable::Blocked
        }
        "NotSupportedError" | "ReferenceError" => Unavailable::Missing,
        _ if writing => Unavailable::WriteFailed,
        _ => Unavailable::ReadFailed,
    };
    StoreError::Unavailable {
        kind,
        detail: failure.text(),
    }
}

/// A record as a plain JS object (objects, not Maps; integers as numbers).
pub fn record_to_js<R: StoredRecord>(record: &R) -> Result<JsValue, StoreError> {
    Ok(json_to_js(&record.to_json()))
}

/// A record from a stored JS value, through the schema check.
pub fn record_from_js<R: StoredRecord>(value: JsValue) -> Result<R, RecordError> {
    if !value.is_object() {
        return Err(RecordError::Corrupt("not an object".into()));
    }
    let version = js_sys::Reflect::get(&value, &JsValue::from_str("schemaVersion"))
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|v| v.fract() == 0.0 && *v >= 0.0)
        .map(|v| v as u64);
    R::check_schema(version)?;
    let json = json_from_js(value).map_err(|e| RecordError::Corrupt(e.text()))?;
    R::from_json(json).map_err(|e| RecordError::Corrupt(e.message()))
}

/// A record from JSON text.
pub fn record_from_text<R: StoredRecord>(text: &str) -> Result<R, RecordError> {
    let value =
        js_sys::JSON::parse(text).map_err(|e| RecordError::Corrupt(JsFailure::from(e).text()))?;
    record_from_js(value)
}

/// Awaits a promise, mapping a rejection to a storage error.
pub(crate) async fn settle(promise: js_sys::Promise, writing: bool) -> Result<JsValue, StoreError> {
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map_err(|e| unavailable(e.into(), writing))
}

/// Any backend, chosen at run time by the client's `storage` option.
#[derive(Debug)]
pub enum AnyStore {
    /// IndexedDB.
    Indexed(IndexedDbStore),
    /// A string store: a caller's adapter, localStorage or memory.
    Text {
        /// The store.
        store: AdapterStore,
        /// Whether of two processes racing on one record exactly one wins:
        /// memory (one process) and an adapter with `compareAndSet`, not
        /// localStorage (whose compare-and-swap holds within a tab only).
        exclusive: bool,
    },
}

impl AnyStore {
    /// Opens a backend by name (`indexedDB`, `localStorage`, `memory`) or
    /// wraps an adapter object, with the default bound on its operations.
    pub fn open(storage: &JsValue) -> Result<AnyStore, StoreError> {
        AnyStore::open_within(storage, super::DEFAULT_CALLBACK_TIMEOUT_MS)
    }

    /// [`AnyStore::open`], an adapter's every operation bounded by
    /// `callback_timeout_ms` (0: unbounded): one that does not settle in
    /// time is `StorageUnavailable`.
    pub fn open_within(
        storage: &JsValue,
        callback_timeout_ms: u32,
    ) -> Result<AnyStore, StoreError> {
        match storage.as_string().as_deref() {
            None if storage.is_undefined() || storage.is_null() => {
                Ok(AnyStore::Indexed(IndexedDbStore::new()))
            }
            Some("indexedDB") => Ok(AnyStore::Indexed(IndexedDbStore::new())),
            Some("localStorage") => {
                let kv = local_storage_kv().map_err(|e| unavailable(JsFailure::from(e), false))?;
                if kv.is_null() {
                    return Err(StoreError::Unavailable {
                        kind: Unavailable::Missing,
                        detail: "localStorage is not available here".into(),
                    });
                }
                Ok(AnyStore::Text {
                    store: adapter::open(kv.unchecked_into(), 0, true)?,
                    exclusive: false,
                })
            }
            Some("memory") => Ok(AnyStore::Text {
                store: adapter::open(memory_kv().unchecked_into(), 0, true)?,
                exclusive: true,
            }),
            Some(other) => Err(StoreError::Unavailable {
                kind: Unavailable::Missing,
                detail: text!(
                    "unknown storage `",
                    other,
                    "`: use 'indexedDB', 'localStorage', 'memory' or an adapter"
                ),
            }),
            None => {
                let store =
                    adapter::open(storage.clone().unchecked_into(), callback_timeout_ms, false)?;
                let exclusive = store.kv().is_atomic();
                Ok(AnyStore::Text { store, exclusive })
            }
        }
    }
}

impl AnyStore {
    /// Whether a write is an atomic compare-and-swap, so that of two
    /// processes racing on one record exactly one wins: IndexedDB (a
    /// transaction), memory (one process), an adapter with `compareAndSet`.
    /// localStorage (within a tab only) and an adapter without it do not.
    pub fn compares_and_swaps(&self) -> bool {
        match self {
            AnyStore::Indexed(_) => true,
            AnyStore::Text { exclusive, .. } => *exclusive,
        }
    }
}

impl AnyStore {
    /// Whether everything that shares this store shares the runtime's Web
    /// Locks too, so that holding a lock excludes every other writer: an
    /// origin's IndexedDB and localStorage (locks span its tabs and
    /// workers) and memory. Not a caller's adapter: an edge KV, a Deno KV
    /// or a directory is shared by processes whose locks are their own.
    pub fn shared_only_under_locks(&self) -> bool {
        match self {
            AnyStore::Indexed(_) => true,
            AnyStore::Text { store, .. } => store.kv().is_builtin(),
        }
    }
}

macro_rules! each_backend {
    ($self:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::Indexed($store) => $call,
            AnyStore::Text { store: $store, .. } => $call,
        }
    };
}

impl<R: StoredRecord> RecordStore<R> for AnyStore {
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<R>, StoreError> {
        each_backend!(self, s => s.get(namespace, id).await)
    }
    async fn put(&self, record: &R) -> Result<u64, StoreError> {
        each_backend!(self, s => s.put(record).await)
    }
    async fn delete(&self, namespace: &str, id: &str) -> Result<(), StoreError> {
        each_backend!(self, s => RecordStore::<R>::delete(s, namespace, id).await)
    }
    async fn list(&self, namespace: &str) -> Result<Listing<R>, StoreError> {
        each_backend!(self, s => s.list(namespace).await)
    }
    async fn delete_many(&self, namespace: &str, ids: &[&str]) -> Result<(), StoreError> {
        each_backend!(self, s => RecordStore::<R>::delete_many(s, namespace, ids).await)
    }
}
