//! One driver per intent across tabs and workers (Web Locks).

use crate::core::text::text;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::JsFailure;

#[wasm_bindgen(module = "/src/web/locks.js")]
extern "C" {
    #[wasm_bindgen(js_name = lockTry)]
    fn lock_try(name: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = lockWait)]
    fn lock_wait(name: &str, timeout_ms: f64) -> js_sys::Promise;
    #[wasm_bindgen(js_name = lockBackground)]
    fn lock_background(name: &str) -> js_sys::Promise;
}

#[wasm_bindgen(module = "/src/web/local_lock.js")]
extern "C" {
    #[wasm_bindgen(js_name = localLockWait)]
    fn local_lock_wait(name: &str, timeout_ms: f64) -> js_sys::Promise;
}

/// Takes the lock of `scope` in `namespace`, under which a scoped intent
/// takes its place ([`named_lock`]).
pub async fn scope_lock(namespace: &str, scope: &str, timeout_ms: u64) -> Option<IntentLock> {
    named_lock(
        &text!("wow-command-client/", namespace, "/scope/", scope),
        timeout_ms,
    )
    .await
}

/// Takes the lock `name`, waiting up to `timeout_ms`: across tabs and
/// workers where there are Web Locks, else within this process. `None`:
/// not granted in time.
pub async fn named_lock(name: &str, timeout_ms: u64) -> Option<IntentLock> {
    let mut value = JsFuture::from(lock_wait(name, timeout_ms as f64))
        .await
        .ok()?;
    if value.is_undefined() {
        value = JsFuture::from(local_lock_wait(name, timeout_ms as f64))
            .await
            .ok()?;
    }
    match attempt_from(value) {
        LockAttempt::Held(lock) => Some(lock),
        _ => None,
    }
}

/// Waits, as long as it takes, for the lock `name` across tabs and
/// workers, for background work: held, or unsupported where there are no
/// Web Locks and in a server process (`lockBackground` in `locks.js`: a lock
/// held there would keep the process alive when no call is pending).
pub async fn wait_forever(name: &str) -> LockAttempt {
    match JsFuture::from(lock_background(name)).await {
        Ok(value) => attempt_from(value),
        Err(_) => LockAttempt::Unsupported,
    }
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

impl IntentLock {
    /// The function that lets the lock go, for a holder that releases it
    /// itself (the history probe's executor), not on drop.
    pub fn into_release(self) -> js_sys::Function {
        let me = std::mem::ManuallyDrop::new(self);
        me.release.clone()
    }
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
    } else if value.is_null() {
        LockAttempt::Busy
    } else {
        LockAttempt::Held(IntentLock {
            release: value.unchecked_into(),
        })
    }
}
