//! localStorage: small and synchronous.

use super::text_kv::{TextKv, TextStore};
use super::unavailable;
use crate::core::journal::{StoreError, Unavailable};
use crate::web::JsFailure;

/// Intent storage in `window.localStorage`.
pub type LocalStorageStore = TextStore<LocalStorageKv>;

/// `window.localStorage` as a [`TextKv`].
#[derive(Debug)]
pub struct LocalStorageKv {
    raw: web_sys::Storage,
}

impl LocalStorageKv {
    /// Opens `window.localStorage` (missing in workers and edge runtimes;
    /// throws `SecurityError` where the browser blocks it).
    pub fn open() -> Result<LocalStorageKv, StoreError> {
        let window = web_sys::window().ok_or_else(|| StoreError::Unavailable {
            kind: Unavailable::Missing,
            detail: "localStorage needs a window".into(),
        })?;
        match window.local_storage() {
            Ok(Some(raw)) => Ok(LocalStorageKv { raw }),
            Ok(None) => Err(StoreError::Unavailable {
                kind: Unavailable::Missing,
                detail: "localStorage is not available".into(),
            }),
            Err(e) => Err(unavailable(JsFailure::from(e), false)),
        }
    }
}

/// Opens the localStorage backend.
pub fn open() -> Result<LocalStorageStore, StoreError> {
    LocalStorageKv::open().map(TextStore::new)
}

impl TextKv for LocalStorageKv {
    async fn read(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.raw
            .get_item(key)
            .map_err(|e| unavailable(JsFailure::from(e), false))
    }

    async fn write(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.raw
            .set_item(key, value)
            .map_err(|e| unavailable(JsFailure::from(e), true))
    }

    async fn remove(&self, key: &str) -> Result<(), StoreError> {
        self.raw
            .remove_item(key)
            .map_err(|e| unavailable(JsFailure::from(e), true))
    }

    async fn entries(&self, prefix: &str) -> Result<Vec<(String, Option<String>)>, StoreError> {
        let len = self
            .raw
            .length()
            .map_err(|e| unavailable(JsFailure::from(e), false))?;
        Ok((0..len)
            .filter_map(|i| self.raw.key(i).ok().flatten())
            .filter(|key| key.starts_with(prefix))
            .map(|key| (key, None))
            .collect())
    }

    async fn compare_and_set(&self, _: &str, _: u64, _: &str) -> Result<Option<bool>, StoreError> {
        Ok(None)
    }
}
