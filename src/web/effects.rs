//! Runs one delivery of an idempotent consumer: the identity's lock (Web
//! Locks, where the runtime has them), the caller's effect and its
//! reconciliation callback, around the core's [`Consumer`] protocol.

use crate::core::text::text;
use wasm_bindgen::{JsCast, JsValue};

use super::locks::{attempt_from, lock_name, wait_lock, LockAttempt};
use super::storage::AnyStore;
use super::{call_and_await, time, JsFailure};
use crate::core::consumer::{Consumer, ConsumerError, Delivery, EffectRecord, Reconciliation};
use crate::core::protocol::JsonValue;

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/web/local_lock.js")]
extern "C" {
    #[wasm_bindgen(js_name = localLockWait)]
    fn local_lock_wait(name: &str, timeout_ms: f64) -> js_sys::Promise;
    #[wasm_bindgen(js_name = hasWebLocks)]
    fn has_web_locks_js() -> bool;
}

/// Takes an in-process lock (for runtimes without Web Locks), waiting up to
/// `timeout_ms`: held, or busy. It excludes other holders in this process
/// only, so it never proves that nobody else drives the same record.
pub async fn wait_local_lock(
    namespace: &str,
    id: &str,
    timeout_ms: u64,
) -> Result<LockAttempt, JsFailure> {
    let value = wasm_bindgen_futures::JsFuture::from(local_lock_wait(
        &lock_name(namespace, id),
        timeout_ms as f64,
    ))
    .await?;
    Ok(attempt_from(value))
}

/// Whether this runtime has Web Locks, which hold across tabs and workers.
pub fn has_web_locks() -> bool {
    has_web_locks_js()
}

/// How a delivery ended well.
#[derive(Debug)]
pub enum Handled {
    /// The effect ran and is recorded done; its return value.
    Ran(EffectRecord, JsValue),
    /// It was already done: not run.
    Skipped(EffectRecord),
    /// A reconciliation found it done: not run.
    Reconciled(EffectRecord),
}

/// How a delivery failed.
#[derive(Debug)]
pub enum HandleFailure {
    /// Refused or failed in the protocol (identity, storage before the
    /// effect, another deliverer taking over).
    Consumer(ConsumerError),
    /// The effect threw; the record stays `started` for reconciliation.
    Effect(EffectRecord, JsValue),
    /// The effect ran but `done` could not be recorded; the next delivery
    /// reconciles. Carries the effect's return value.
    DoneNotRecorded(EffectRecord, JsValue, ConsumerError),
    /// Started, never recorded done, and no reconciliation callback given.
    NeedsReconciliation(EffectRecord),
    /// The reconciliation callback threw or gave no usable answer.
    ReconcileFailed(EffectRecord, JsValue),
    /// Another deliverer kept it busy longer than the caller would wait.
    Busy(Option<EffectRecord>),
    /// The effect did not settle within its deadline (ms): whether it took
    /// place is unknown, so the record stays `started` with its lease ended
    /// and the next delivery reconciles.
    EffectTimedOut(EffectRecord, u64),
}

impl From<ConsumerError> for HandleFailure {
    fn from(e: ConsumerError) -> Self {
        HandleFailure::Consumer(e)
    }
}

/// A JS value as JSON (`None` where it is not JSON-compatible or beyond
/// the body limits: the record keeps no result, the caller still gets it).
fn json_of(value: &JsValue) -> Option<JsonValue> {
    if value.is_undefined() {
        return None;
    }
    super::caller_json(value, "the result", super::JsonLimits::default()).ok()
}

/// Reads a reconciliation callback's answer: `'done'`, `'run'`,
/// `{ done: result }` or `{ run: true }`.
fn reconciliation(answer: &JsValue) -> Option<Reconciliation> {
    match answer.as_string().as_deref() {
        Some("done") => return Some(Reconciliation::Done(None)),
        Some("run") => return Some(Reconciliation::Run),
        Some(_) => return None,
        None => {}
    }
    if !answer.is_object() {
        return None;
    }
    let field = |name: &str| crate::web::safe_read::get(answer, name);
    if let Some(done) = field("done").filter(|v| !v.is_undefined()) {
        return Some(Reconciliation::Done(json_of(&done)));
    }
    field("run")
        .and_then(|v| v.as_bool())
        .filter(|run| *run)
        .map(|_| Reconciliation::Run)
}

/// One delivery's inputs.
#[derive(Debug)]
pub struct DeliveryRun<'a> {
    /// The consumer.
    pub consumer: &'a Consumer<AnyStore>,
    /// This deliverer's owner id.
    pub owner: &'a str,
    /// The input identity.
    pub identity: &'a str,
    /// The effect: `(identity) => result | Promise<result>`.
    pub effect: &'a js_sys::Function,
    /// The reconciliation: `(identity, record) => answer | Promise<answer>`.
    pub reconcile: Option<&'a js_sys::Function>,
    /// How long to wait for a busy identity.
    pub max_wait_ms: u64,
    /// How long the effect may take before the delivery gives up on it (0: unbounded).
    pub effect_timeout_ms: u64,
    /// How long `reconcile` may take (0: unbounded).
    pub callback_timeout_ms: u32,
}

// A failure carries the effect's record to the caller's error (once per
// delivery, off the hot path): boxing it would cost code, not save time.
#[allow(clippy::result_large_err)]
impl DeliveryRun<'_> {
    /// Handles the delivery.
    pub async fn handle(&self) -> Result<Handled, HandleFailure> {
        let deadline = time::now().saturating_add(self.max_wait_ms as i64);
        let lock_id = text!("effects/", self.identity);
        let namespace = self.consumer.namespace();
        let mut last_busy = None;
        loop {
            let remaining = deadline.saturating_sub(time::now()).max(0) as u64;
            let lock = wait_lock(namespace, &lock_id, remaining).await;
            let (exclusive, _held) = match lock {
                // A lock excludes every other deliverer only where nothing
                // outside the locks' reach shares the store (Deno's and
                // Node's locks are the process's own; a KV is not).
                Ok(LockAttempt::Held(held)) => {
                    (self.consumer.store().shared_only_under_locks(), Some(held))
                }
                Ok(LockAttempt::Busy) => return Err(HandleFailure::Busy(last_busy)),
                // No Web Locks: deliveries of one identity inside this
                // process still take turns, whatever the store; across
                // processes the store's compare-and-swap decides.
                Ok(LockAttempt::Unsupported) | Err(_) => {
                    match wait_local_lock(namespace, &lock_id, remaining).await {
                        Ok(LockAttempt::Held(held)) => (false, Some(held)),
                        _ => return Err(HandleFailure::Busy(last_busy)),
                    }
                }
            };
            let now = time::now() as u64;
            match self
                .consumer
                .deliver(self.identity, now, self.owner, exclusive)
                .await?
            {
                Delivery::Run(started) => return self.run(started).await,
                Delivery::Skip(done) => return Ok(Handled::Skipped(done)),
                Delivery::Reconcile(found) => return self.reconcile(found).await,
                Delivery::Busy { until, record } => {
                    let now = time::now();
                    if now >= deadline {
                        return Err(HandleFailure::Busy(Some(record)));
                    }
                    last_busy = Some(record);
                    let wait = (until as i64 - now).clamp(20, 200).min(deadline - now);
                    time::sleep(wait).await;
                }
            }
        }
    }

    async fn run(&self, started: EffectRecord) -> Result<Handled, HandleFailure> {
        let identity = JsValue::from_str(self.identity);
        // The effect is the caller's work; past its deadline (by default its
        // lease, after which another deliverer may take over) the call ends
        // and the record says the outcome is unknown.
        let within = self.effect_timeout_ms.min(u32::MAX as u64) as u32;
        match call_and_await(
            self.effect,
            &JsValue::NULL,
            &[&identity],
            within,
            "the effect",
        )
        .await
        {
            Ok(value) => {
                let now = time::now() as u64;
                match self.consumer.complete(&started, now, json_of(&value)).await {
                    Ok(done) => Ok(Handled::Ran(done, value)),
                    Err(e) => Err(HandleFailure::DoneNotRecorded(started, value, e)),
                }
            }
            Err(thrown) => {
                let timed_out = js_sys::Reflect::get(&thrown, &JsValue::from_str("deadlineMs"))
                    .is_ok_and(|v| v.as_f64().is_some());
                let detail = if timed_out {
                    "the effect did not settle within its deadline (effectTimeoutMs); whether it took place is unknown".to_owned()
                } else {
                    JsFailure::from(thrown.clone()).text()
                };
                let now = time::now() as u64;
                let record = self
                    .consumer
                    .fail(&started, now, &detail)
                    .await
                    .unwrap_or(started);
                Err(if timed_out {
                    HandleFailure::EffectTimedOut(record, self.effect_timeout_ms)
                } else {
                    HandleFailure::Effect(record, thrown)
                })
            }
        }
    }

    async fn reconcile(&self, found: EffectRecord) -> Result<Handled, HandleFailure> {
        let Some(callback) = self.reconcile else {
            return Err(HandleFailure::NeedsReconciliation(found));
        };
        let identity = JsValue::from_str(self.identity);
        let found_js = super::to_js(&found);
        let answer = match call_and_await(
            callback,
            &JsValue::NULL,
            &[&identity, &found_js],
            self.callback_timeout_ms,
            "reconcile()",
        )
        .await
        {
            Ok(answer) => answer,
            Err(thrown) => return Err(HandleFailure::ReconcileFailed(found, thrown)),
        };
        let Some(answer) = reconciliation(&answer) else {
            let why = js_sys::Error::new(
                "reconcile must answer 'done', 'run', { done: result } or { run: true }",
            );
            return Err(HandleFailure::ReconcileFailed(found, why.unchecked_into()));
        };
        let now = time::now() as u64;
        match self
            .consumer
            .reconciled(&found, now, self.owner, answer)
            .await?
        {
            Delivery::Run(started) => self.run(started).await,
            Delivery::Skip(done) => Ok(Handled::Reconciled(done)),
            other => unreachable!("reconciled answers Run or Skip, not {other:?}"),
        }
    }
}
