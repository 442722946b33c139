//! IndexedDB, the default in browsers: one database per namespace, every
//! operation one transaction, writes with strict durability where the
//! record says it needs the flush (unresolved intents, effects). It sits
//! behind the same storage-adapter contract as every other store (`idbKv`
//! in `indexed_db.js`), so the module carries one store implementation, not two.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/storage/indexed_db.js")]
extern "C" {
    #[wasm_bindgen(js_name = idbKv)]
    fn idb_kv(namespace: &str) -> js_sys::Object;
    #[wasm_bindgen(js_name = storagePersistence)]
    fn storage_persistence(ask: bool) -> js_sys::Promise;
    #[wasm_bindgen(js_name = idbDeleteDatabase)]
    fn idb_delete_database(name: &str) -> js_sys::Promise;
}

/// A namespace's database as a storage adapter object (`get`, `set`,
/// `delete`, `deleteMany`, `list`, `compareAndSet`); nothing is opened
/// before its first operation.
pub fn adapter(namespace: &str) -> js_sys::Object {
    idb_kv(namespace)
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
    crate::core::text::text!("wow-command-client/", namespace)
}

/// Deletes a namespace's whole database (tests; a connection still open
/// elsewhere makes the deletion wait for it).
pub fn delete_database(namespace: &str) -> js_sys::Promise {
    idb_delete_database(&database_name(namespace))
}
