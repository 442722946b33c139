//! IndexedDB, the default in browsers: one database per namespace, every
//! operation one transaction (in `idb.js`), writes with strict durability
//! where the record says it needs the flush (unresolved intents, effects).

use crate::core::text::text;
use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use super::{record_from_js, record_to_js, settle};
use crate::core::journal::{
    next_revision, Listing, Quarantined, RecordError, RecordStore, StoreError, StoredRecord,
};

#[wasm_bindgen(module = "/src/web/storage/idb.js")]
extern "C" {
    #[wasm_bindgen(js_name = idbOpen)]
    fn idb_open(name: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbGet)]
    fn idb_get(db: &JsValue, area: &str, key: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbCas)]
    fn idb_cas(
        db: &JsValue,
        area: &str,
        key: &str,
        expected: f64,
        value: &JsValue,
        flush: bool,
    ) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbDelete)]
    fn idb_delete(db: &JsValue, area: &str, key: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbDeleteMany)]
    fn idb_delete_many(db: &JsValue, area: &str, keys: js_sys::Array) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbEntries)]
    fn idb_entries(db: &JsValue, area: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbQuarantine)]
    fn idb_quarantine(
        db: &JsValue,
        area: &str,
        key: &str,
        value: &JsValue,
        reason: &str,
    ) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbQuarantineKeys)]
    fn idb_quarantine_keys(db: &JsValue, area: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = storagePersistence)]
    fn storage_persistence(ask: bool) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbDeleteDatabase)]
    fn idb_delete_database(name: &str) -> js_sys::Promise;
}

/// Whether the browser keeps this origin's storage under pressure, as a
/// promise of `true`, `false` or `null` (no StorageManager) that never
/// rejects; with `ask`, asks for it (`navigator.storage.persist()`). Not
/// awaited by anything of the client: Firefox answers only when the user
/// answers its permission prompt.
pub fn persistence(ask: bool) -> js_sys::Promise {
    storage_persistence(ask)
}

/// The database name of a namespace.
pub fn database_name(namespace: &str) -> String {
    text!("wow-command-client/", namespace)
}

/// The IndexedDB backend; connections are opened per namespace on first use.
#[derive(Debug, Default)]
pub struct IndexedDbStore {
    /// By namespace; a client opens one or two, so a list beats a hash map
    /// (and its hasher) in the module.
    connections: RefCell<Vec<(String, JsValue)>>,
}

impl IndexedDbStore {
    /// A store that opens its databases lazily.
    pub fn new() -> IndexedDbStore {
        IndexedDbStore::default()
    }

    async fn db(&self, namespace: &str) -> Result<JsValue, StoreError> {
        if let Some((_, db)) = self
            .connections
            .borrow()
            .iter()
            .find(|(n, _)| n == namespace)
        {
            return Ok(db.clone());
        }
        let db = settle(idb_open(&database_name(namespace)), false).await?;
        let mut connections = self.connections.borrow_mut();
        // Another call may have opened it meanwhile: keep the first.
        match connections.iter().find(|(n, _)| n == namespace) {
            Some((_, first)) => Ok(first.clone()),
            None => {
                connections.push((namespace.to_owned(), db.clone()));
                Ok(db)
            }
        }
    }

    /// Deletes a namespace's whole database (sign-out).
    pub async fn delete_database(&self, namespace: &str) -> Result<(), StoreError> {
        let open = {
            let mut connections = self.connections.borrow_mut();
            let at = connections.iter().position(|(n, _)| n == namespace);
            at.map(|i| connections.swap_remove(i).1)
        };
        if let Some(db) = open {
            let _ = js_sys::Reflect::get(&db, &"close".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .map(|close| close.call0(&db));
        }
        settle(idb_delete_database(&database_name(namespace)), true).await?;
        Ok(())
    }
}

impl<R: StoredRecord> RecordStore<R> for IndexedDbStore {
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<R>, StoreError> {
        let area = R::KIND.area();
        let db = self.db(namespace).await?;
        let value = settle(idb_get(&db, area, id), false).await?;
        if value.is_null() {
            return Ok(None);
        }
        match record_from_js(value.clone()) {
            Ok(record) => Ok(Some(record)),
            Err(reason) => {
                quarantine(&db, area, id, &value, &reason).await?;
                Err(StoreError::Unavailable {
                    kind: crate::core::journal::Unavailable::ReadFailed,
                    detail: text!(namespace, "/", id, ": ", reason.message()),
                })
            }
        }
    }

    async fn put(&self, record: &R) -> Result<u64, StoreError> {
        let db = self.db(record.namespace()).await?;
        let next = next_revision(record);
        let value = record_to_js(&next)?;
        let expected = record.revision() as f64;
        let found = settle(
            idb_cas(
                &db,
                R::KIND.area(),
                record.id(),
                expected,
                &value,
                record.needs_flush(),
            ),
            true,
        )
        .await?;
        if found.is_null() {
            return Ok(next.revision());
        }
        let found = found.as_f64().unwrap_or(-1.0);
        Err(StoreError::Conflict {
            current: (found >= 0.0).then_some(found as u64),
        })
    }

    async fn delete(&self, namespace: &str, id: &str) -> Result<(), StoreError> {
        let db = self.db(namespace).await?;
        settle(idb_delete(&db, R::KIND.area(), id), true).await?;
        Ok(())
    }

    async fn delete_many(&self, namespace: &str, ids: &[&str]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let db = self.db(namespace).await?;
        let keys: js_sys::Array = ids.iter().map(|id| JsValue::from_str(id)).collect();
        settle(idb_delete_many(&db, R::KIND.area(), keys), true).await?;
        Ok(())
    }

    async fn list(&self, namespace: &str) -> Result<Listing<R>, StoreError> {
        let area = R::KIND.area();
        let db = self.db(namespace).await?;
        let entries: js_sys::Array = settle(idb_entries(&db, area), false)
            .await?
            .unchecked_into();
        let mut listing = Listing::default();
        for entry in entries.iter() {
            let entry: js_sys::Array = entry.unchecked_into();
            let key = entry.get(0).as_string().unwrap_or_default();
            let value = entry.get(1);
            match record_from_js(value.clone()) {
                Ok(record) => listing.records.push(record),
                Err(reason) => {
                    quarantine(&db, area, &key, &value, &reason).await?;
                    listing.quarantined.push(Quarantined {
                        key: text!(namespace, "/", key),
                        reason,
                    });
                }
            }
        }
        let aside: js_sys::Array = settle(idb_quarantine_keys(&db, area), false)
            .await?
            .unchecked_into();
        for key in aside.iter().filter_map(|k| k.as_string()) {
            let key = text!(namespace, "/", key);
            if !listing.quarantined.iter().any(|q| q.key == key) {
                listing.quarantined.push(Quarantined {
                    key,
                    reason: RecordError::Corrupt("quarantined earlier".into()),
                });
            }
        }
        Ok(listing)
    }
}

/// Moves an unreadable entry into the `quarantine` store (a record from a
/// newer build is left where it is).
async fn quarantine(
    db: &JsValue,
    area: &str,
    key: &str,
    value: &JsValue,
    reason: &RecordError,
) -> Result<(), StoreError> {
    if matches!(reason, RecordError::FutureSchema(_)) {
        return Ok(());
    }
    settle(
        idb_quarantine(db, area, key, value, &reason.message()),
        true,
    )
    .await?;
    Ok(())
}
