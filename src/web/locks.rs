//! One driver per intent across tabs and workers (Web Locks).

use crate::core::text::text;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::JsFailure;

#[wasm_bindgen(module = "/src/web/locks.js")]
extern "C" {
    /// A release function when free, null when held elsewhere, undefined without Web Locks.
    #[wasm_bindgen(js_name = lockTry)]
    pub(crate) fn lock_try(name: &str) -> js_sys::Promise;
    /// The same, waiting up to `timeout_ms` (null when not granted in time).
    #[wasm_bindgen(js_name = lockWait)]
    pub(crate) fn lock_wait(name: &str, timeout_ms: f64) -> js_sys::Promise;
    /// Background work's lock: never in a server process.
    #[wasm_bindgen(js_name = lockBackground)]
    pub(crate) fn lock_background(name: &str) -> js_sys::Promise;
}

#[wasm_bindgen(module = "/src/web/local_lock.js")]
extern "C" {
    /// This process's own lock, where there are no Web Locks.
    #[wasm_bindgen(js_name = localLockWait)]
    pub(crate) fn local_lock_wait(name: &str, timeout_ms: f64) -> js_sys::Promise;
}

/// The lock name of an intent.
pub fn lock_name(namespace: &str, intent_id: &str) -> String {
    text!("wow-command-client/", namespace, "/", intent_id)
}

/// A held intent lock; released when dropped.
#[derive(Debug)]
pub struct IntentLock {
    release: js_sys::Function,
}

impl Drop for IntentLock {
    fn drop(&mut self) {
        let _ = self.release.call0(&JsValue::NULL);
    }
}

/// What trying an intent's lock found.
#[derive(Debug)]
pub enum LockAttempt {
    /// This context drives the intent until the lock is dropped.
    Held(IntentLock),
    /// Another tab or worker drives it.
    Busy,
    /// No Locks API here: automatic resume must stay off.
    Unsupported,
}

/// Tries to take the lock of one intent without waiting.
pub async fn try_lock(namespace: &str, intent_id: &str) -> Result<LockAttempt, JsFailure> {
    let value = JsFuture::from(lock_try(&lock_name(namespace, intent_id))).await?;
    Ok(attempt_from(value))
}

/// Takes the lock of one intent, waiting up to `timeout_ms` for its holder.
pub async fn wait_lock(
    namespace: &str,
    intent_id: &str,
    timeout_ms: u64,
) -> Result<LockAttempt, JsFailure> {
    PendingLock::request(namespace, intent_id, timeout_ms)
        .granted()
        .await
}

/// An intent lock asked for and perhaps not granted yet. The Locks API
/// queues the request when it is made, so whoever asks later waits behind
/// it; the answer can be collected later, off the critical path (the
/// promise becomes a future only then, so nothing of it runs before a send).
#[derive(Debug)]
pub struct PendingLock(js_sys::Promise);

impl PendingLock {
    /// Asks for the lock now, to be granted within `timeout_ms`.
    pub fn request(namespace: &str, intent_id: &str, timeout_ms: u64) -> PendingLock {
        PendingLock(lock_wait(
            &lock_name(namespace, intent_id),
            timeout_ms as f64,
        ))
    }

    /// The answer: held, busy (not granted in time) or unsupported.
    pub async fn granted(self) -> Result<LockAttempt, JsFailure> {
        Ok(attempt_from(JsFuture::from(self.0).await?))
    }
}

pub(crate) fn attempt_from(value: JsValue) -> LockAttempt {
    if value.is_undefined() {
        LockAttempt::Unsupported
    } else if value.is_null_or_undefined() {
        LockAttempt::Busy
    } else {
        LockAttempt::Held(IntentLock {
            release: value.unchecked_into(),
        })
    }
}
