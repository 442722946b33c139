//! A caller-supplied async adapter, for edge KV stores and the like:
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
//! `flush` says the write must be durable before it resolves (an
//! unresolved intent, an effect); a store that is always durable ignores
//! it. IndexedDB is such an object too (`idbKv` in `indexed_db.js`), one that
//! hands records back as the objects it keeps.
//!
//! With `compareAndSet` (a Durable Object, a database row), writes are
//! atomic compare-and-swaps. Without it, a write reads, compares and writes:
//! two writers racing on one intent could both succeed, so the per-intent
//! lock (or the runtime's single-writer guarantee) must keep one driver per
//! intent. Eventually consistent KV stores can also return a stale read.

use crate::core::text::text;
use wasm_bindgen::JsValue;

use super::key_value::{KeyValue, KeyValueStore};
use super::stored::unavailable;
use crate::core::journal::{StoreError, Unavailable};
use crate::web::{call_and_await, JsFailure};

/// Intent storage through a caller's adapter.
pub type AdapterStore = KeyValueStore<AdapterKv>;

/// A JS adapter object as a [`KeyValue`].
#[derive(Debug)]
pub struct AdapterKv {
    raw: js_sys::Object,
    /// Each operation's bound (0: none).
    timeout_ms: u32,
    /// The built-in stores (localStorage, memory) answer synchronously and
    /// are ours: called directly, with no promise, deadline or message.
    immediate: bool,
    /// One of the built-in stores (IndexedDB, localStorage, memory): shared
    /// only by what shares the runtime's Web Locks.
    builtin: bool,
}

fn method(raw: &js_sys::Object, name: &str) -> Option<js_sys::Function> {
    crate::web::safe_read::get(raw, name).and_then(|f| crate::web::safe_read::function(&f))
}

/// Wraps an adapter object, checking it has the required methods;
/// `immediate` for the built-in stores of the same contract
/// (`src/web/storage/builtin_kv.js`), whose every method answers at once.
pub fn open(
    raw: js_sys::Object,
    timeout_ms: u32,
    immediate: bool,
    builtin: bool,
) -> Result<AdapterStore, StoreError> {
    for name in ["get", "set", "delete", "list"] {
        if method(&raw, name).is_none() {
            return Err(StoreError::Unavailable {
                kind: Unavailable::Missing,
                detail: text!("the storage adapter has no `", name, "` method"),
            });
        }
    }
    Ok(KeyValueStore::new(AdapterKv {
        raw,
        timeout_ms,
        immediate,
        builtin,
    }))
}

impl AdapterKv {
    /// Whether this is one of the built-in stores (IndexedDB, localStorage, memory).
    pub fn is_builtin(&self) -> bool {
        self.builtin
    }

    /// Whether the store offers `compareAndSet` (an atomic compare-and-swap
    /// where it holds: localStorage's within its tab only).
    pub fn has_compare_and_set(&self) -> bool {
        method(&self.raw, "compareAndSet").is_some()
    }

    async fn call(
        &self,
        name: &str,
        args: &[JsValue],
        writing: bool,
    ) -> Result<JsValue, StoreError> {
        let f = method(&self.raw, name).ok_or_else(|| StoreError::Unavailable {
            kind: Unavailable::Missing,
            detail: text!("the storage adapter has no `", name, "` method"),
        })?;
        if self.immediate {
            let args: js_sys::Array = args.iter().collect();
            return f
                .apply(&self.raw, &args)
                .map_err(|e| unavailable(JsFailure::from(e), writing));
        }
        let args: Vec<&JsValue> = args.iter().collect();
        let what = text!("the storage adapter's ", name, "()");
        call_and_await(&f, &self.raw, &args, self.timeout_ms, &what)
            .await
            .map_err(|e| unavailable(JsFailure::from(e), writing))
    }
}

fn not_a(what: &str, call: String) -> StoreError {
    StoreError::Unavailable {
        kind: Unavailable::ReadFailed,
        detail: text!("the adapter's ", call, " did not return ", what),
    }
}

/// A stored value: a string, or, from one of the built-in stores
/// (IndexedDB keeps records as objects), whatever it holds: the record
/// reader takes it or moves it aside as damaged, so one odd entry never
/// makes the journal unreadable. A caller's adapter answers strings only:
/// anything else is refused, never read as a record (and so never moved
/// aside).
fn stored(v: JsValue, builtin: bool) -> Option<JsValue> {
    (builtin || v.is_string()).then_some(v)
}

impl KeyValue for AdapterKv {
    async fn read(&self, key: &str) -> Result<Option<JsValue>, StoreError> {
        let v = self.call("get", &[key.into()], false).await?;
        if v.is_null_or_undefined() {
            return Ok(None);
        }
        stored(v, self.builtin)
            .map(Some)
            .ok_or_else(|| not_a("a string", text!("get(", key, ")")))
    }

    async fn write(&self, key: &str, value: &JsValue) -> Result<(), StoreError> {
        self.call("set", &[key.into(), value.clone()], true)
            .await
            .map(drop)
    }

    async fn remove(&self, key: &str) -> Result<(), StoreError> {
        self.call("delete", &[key.into()], true).await.map(drop)
    }

    async fn remove_many(&self, keys: &[String]) -> Result<(), StoreError> {
        if method(&self.raw, "deleteMany").is_some() {
            let keys: js_sys::Array = keys.iter().map(|k| JsValue::from_str(k)).collect();
            return self
                .call("deleteMany", &[keys.into()], true)
                .await
                .map(drop);
        }
        for key in keys {
            self.remove(key).await?;
        }
        Ok(())
    }

    async fn entries(&self, prefix: &str) -> Result<Vec<(String, Option<JsValue>)>, StoreError> {
        let found = self.call("list", &[prefix.into()], false).await?;
        let entries = crate::web::safe_read::elements(&found)
            .ok_or_else(|| not_a("an array", text!("list(", prefix, ")")))?;
        Ok(entries
            .into_iter()
            .filter_map(|entry| match crate::web::safe_read::elements(&entry) {
                Some(pair) => Some((
                    pair.first()?.as_string()?,
                    pair.get(1).cloned().and_then(|v| stored(v, self.builtin)),
                )),
                None => Some((entry.as_string()?, None)),
            })
            .filter(|(key, _)| key.starts_with(prefix))
            .collect())
    }

    async fn compare_and_set(
        &self,
        key: &str,
        expected: u64,
        value: &JsValue,
        flush: bool,
    ) -> Result<Option<bool>, StoreError> {
        if !self.has_compare_and_set() {
            return Ok(None);
        }
        let args = [
            key.into(),
            (expected as f64).into(),
            value.clone(),
            flush.into(),
        ];
        let swapped = self.call("compareAndSet", &args, true).await?;
        Ok(Some(swapped.as_bool() == Some(true)))
    }
}
