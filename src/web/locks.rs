//! One driver per intent across tabs and workers (Web Locks), and state
//! announcements to other tabs (BroadcastChannel).

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::JsFailure;

#[wasm_bindgen(module = "/src/web/locks.js")]
extern "C" {
    #[wasm_bindgen(js_name = lockTry)]
    fn lock_try(name: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = lockWait)]
    fn lock_wait(name: &str, timeout_ms: f64) -> js_sys::Promise;
    #[wasm_bindgen(js_name = channelOpen)]
    fn channel_open(name: &str) -> JsValue;
    #[wasm_bindgen(js_name = channelPost)]
    fn channel_post(channel: &JsValue, message: &JsValue);
    #[wasm_bindgen(js_name = channelListen)]
    fn channel_listen(channel: &JsValue, callback: &js_sys::Function);
    #[wasm_bindgen(js_name = channelClose)]
    fn channel_close(channel: &JsValue);
}

/// The lock name of an intent.
pub fn lock_name(namespace: &str, intent_id: &str) -> String {
    format!("wow-command-client/{namespace}/{intent_id}")
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
/// it; the answer can be collected later, off the critical path.
#[derive(Debug)]
pub struct PendingLock(JsFuture);

impl PendingLock {
    /// Asks for the lock now, to be granted within `timeout_ms`.
    pub fn request(namespace: &str, intent_id: &str, timeout_ms: u64) -> PendingLock {
        PendingLock(JsFuture::from(lock_wait(
            &lock_name(namespace, intent_id),
            timeout_ms as f64,
        )))
    }

    /// The answer: held, busy (not granted in time) or unsupported.
    pub async fn granted(self) -> Result<LockAttempt, JsFailure> {
        Ok(attempt_from(self.0.await?))
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

/// Announces intent changes to other tabs of the same origin.
#[derive(Debug)]
pub struct Announcer {
    raw: JsValue,
    _listener: Option<Closure<dyn FnMut(JsValue)>>,
}

impl Announcer {
    /// Opens the channel of `namespace` (a no-op where BroadcastChannel is missing).
    pub fn open(namespace: &str) -> Announcer {
        Announcer {
            raw: channel_open(&format!("wow-command-client/{namespace}")),
            _listener: None,
        }
    }

    /// Posts a message (a structured-clonable value).
    pub fn post(&self, message: &JsValue) {
        channel_post(&self.raw, message);
    }

    /// Calls `callback` with every message other contexts post.
    pub fn listen(&mut self, callback: impl FnMut(JsValue) + 'static) {
        let closure = Closure::<dyn FnMut(JsValue)>::new(callback);
        channel_listen(&self.raw, closure.as_ref().unchecked_ref());
        self._listener = Some(closure);
    }
}

impl Drop for Announcer {
    fn drop(&mut self) {
        channel_close(&self.raw);
    }
}
