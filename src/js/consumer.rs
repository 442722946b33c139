//! `IdempotentConsumer`: code with side effects records each input identity
//! (a domain event id, a message id, a business key) in its own durable
//! store, so a redelivery is skipped, a concurrent delivery waits, and a
//! crash between the effect and its record goes to reconciliation instead
//! of running the effect blindly again.

use wasm_bindgen::prelude::*;

use crate::core::consumer::{Consumer, ConsumerError, EffectRecord, DEFAULT_LEASE_MS};
use crate::core::journal::StoreError;
use crate::web::effects::{DeliveryRun, HandleFailure, Handled};
use crate::web::random::random_u64;
use crate::web::storage::AnyStore;
use crate::web::{time, to_js, JsFailure};

use super::input;

#[wasm_bindgen(module = "/src/js/support.js")]
extern "C" {
    #[wasm_bindgen(js_name = makeEffectError)]
    fn make_effect_error(
        code: &str,
        message: &str,
        identity: &JsValue,
        record: &JsValue,
        cause: &JsValue,
        result: &JsValue,
    ) -> JsValue;
}

/// Settled records are kept this long by default before `prune` removes them.
const DEFAULT_RETENTION_MS: u64 = 7 * 86_400_000;

fn effect_error(code: &str, message: &str, identity: Option<&str>) -> JsValue {
    let identity = identity.map_or(JsValue::NULL, JsValue::from_str);
    let none = JsValue::UNDEFINED;
    make_effect_error(code, message, &identity, &JsValue::NULL, &none, &none)
}

fn consumer_error(e: ConsumerError, identity: Option<&str>) -> JsValue {
    let code = match &e {
        ConsumerError::InvalidIdentity(_) => "InvalidIdentity",
        ConsumerError::Storage(StoreError::Unavailable { .. }) => "StorageUnavailable",
        ConsumerError::Storage(StoreError::Conflict { .. }) | ConsumerError::Superseded { .. } => {
            "Superseded"
        }
    };
    let record = match &e {
        ConsumerError::Superseded { current: Some(r) } => to_js(r.as_ref()),
        _ => JsValue::NULL,
    };
    let identity = identity.map_or(JsValue::NULL, JsValue::from_str);
    let none = JsValue::UNDEFINED;
    make_effect_error(code, &e.to_string(), &identity, &record, &none, &none)
}

fn failure(f: HandleFailure, identity: &str) -> JsValue {
    let id = JsValue::from_str(identity);
    let none = JsValue::UNDEFINED;
    match f {
        HandleFailure::Consumer(e) => consumer_error(e, Some(identity)),
        HandleFailure::Effect(record, thrown) => {
            let message = JsFailure::from(thrown.clone()).to_string();
            make_effect_error(
                "EffectFailed",
                &message,
                &id,
                &to_js(&record),
                &thrown,
                &none,
            )
        }
        HandleFailure::DoneNotRecorded(record, value, cause) => make_effect_error(
            "DoneNotRecorded",
            &format!("the effect ran but `done` is not recorded: {cause}"),
            &id,
            &to_js(&record),
            &none,
            &value,
        ),
        HandleFailure::NeedsReconciliation(record) => make_effect_error(
            "NeedsReconciliation",
            "started earlier and never recorded done: pass `reconcile` to decide",
            &id,
            &to_js(&record),
            &none,
            &none,
        ),
        HandleFailure::ReconcileFailed(record, thrown) => {
            let message = JsFailure::from(thrown.clone()).to_string();
            make_effect_error(
                "ReconcileFailed",
                &message,
                &id,
                &to_js(&record),
                &thrown,
                &none,
            )
        }
        HandleFailure::EffectTimedOut(record, ms) => make_effect_error(
            "EffectTimedOut",
            &format!(
                "the effect did not settle within {ms} ms (effectTimeoutMs): whether it took place \
                 is unknown, so the next delivery reconciles"
            ),
            &id,
            &to_js(&record),
            &none,
            &none,
        ),
        HandleFailure::Busy(record) => make_effect_error(
            "Busy",
            "another deliverer is running this identity's effect",
            &id,
            &record.as_ref().map_or(JsValue::NULL, to_js),
            &none,
            &none,
        ),
    }
}

fn handled(outcome: Handled) -> JsValue {
    let (status, result, record) = match outcome {
        Handled::Ran(record, value) => ("ran", value, record),
        Handled::Skipped(record) => ("skipped", stored_result(&record), record),
        Handled::Reconciled(record) => ("reconciled", stored_result(&record), record),
    };
    let object = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| {
        let _ = js_sys::Reflect::set(&object, &JsValue::from_str(k), v);
    };
    set("status", &JsValue::from_str(status));
    set("identity", &JsValue::from_str(&record.identity));
    set("attempt", &JsValue::from(record.attempt));
    set("result", &result);
    set("record", &to_js(&record));
    object.into()
}

/// The result recorded with a done effect.
fn stored_result(record: &EffectRecord) -> JsValue {
    record.result.as_ref().map_or(JsValue::UNDEFINED, to_js)
}

/// A consumer with side effects that records each input identity durably.
#[wasm_bindgen]
pub struct IdempotentConsumer {
    inner: Consumer<AnyStore>,
    owner: String,
    reconcile: Option<js_sys::Function>,
    max_wait_ms: u64,
    effect_timeout_ms: u64,
    callback_timeout_ms: u32,
}

#[wasm_bindgen]
impl IdempotentConsumer {
    /// Opens a consumer over the same storage choices as `WowClient`
    /// (`'indexedDB'`, `'localStorage'`, `'memory'` or an adapter).
    #[wasm_bindgen(unchecked_return_type = "IdempotentConsumer")]
    pub async fn open(
        #[wasm_bindgen(unchecked_optional_param_type = "ConsumerOptions")] options: Option<
            js_sys::Object,
        >,
    ) -> Result<IdempotentConsumer, JsValue> {
        let options: JsValue = options.unwrap_or_default().into();
        let options = if options.is_object() {
            options
        } else {
            return Err(effect_error(
                "InvalidOptions",
                "options must be an object",
                None,
            ));
        };
        let field = |name: &str| js_sys::Reflect::get(&options, &JsValue::from_str(name)).ok();
        let namespace = match field("namespace").filter(|v| !v.is_undefined()) {
            None => "default".to_owned(),
            Some(v) => v
                .as_string()
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| {
                    effect_error(
                        "InvalidOptions",
                        "namespace must be a non-empty string",
                        None,
                    )
                })?,
        };
        let ms = |name: &str, default: u64| -> Result<u64, JsValue> {
            match field(name).filter(|v| !v.is_undefined()) {
                None => Ok(default),
                Some(v) => v
                    .as_f64()
                    .filter(|n| n.is_finite() && *n >= 0.0)
                    .map(|n| n as u64)
                    .ok_or_else(|| {
                        let message = format!("{name} must be a non-negative number");
                        effect_error("InvalidOptions", &message, None)
                    }),
            }
        };
        let lease_ms = ms("leaseMs", DEFAULT_LEASE_MS)?;
        let max_wait_ms = ms("maxWaitMs", lease_ms.saturating_mul(2))?;
        let effect_timeout_ms = ms("effectTimeoutMs", lease_ms)?;
        let callback_timeout_ms = ms(
            "callbackTimeoutMs",
            crate::web::DEFAULT_CALLBACK_TIMEOUT_MS as u64,
        )?
        .min(u32::MAX as u64) as u32;
        let reconcile = input::function(&options, "reconcile")
            .map_err(|e| effect_error("InvalidOptions", &e, None))?;
        let storage = field("storage").unwrap_or(JsValue::UNDEFINED);
        let store = AnyStore::open_within(&storage, callback_timeout_ms)
            .map_err(|e| consumer_error(ConsumerError::Storage(e), None))?;
        // One deliverer must win across processes: by the store's
        // compare-and-swap, or by Web Locks. Without either, effects can run
        // twice; only the caller may accept that, by name.
        let allow_duplicates =
            field("allowDuplicateEffects").and_then(|v| v.as_bool()) == Some(true);
        if !store.compares_and_swaps() && !crate::web::effects::has_web_locks() && !allow_duplicates
        {
            return Err(effect_error(
                "StorageCannotExclude",
                "this storage can neither compare-and-swap nor lock across processes, so two \
                 deliverers could both run an effect: use an adapter with compareAndSet (a \
                 Durable Object, a database row), a runtime with Web Locks, or pass \
                 allowDuplicateEffects: true to accept at-least-once effects",
                None,
            ));
        }
        let inner = Consumer::new(store, namespace, lease_ms);
        // Verify the storage answers now, not at the first delivery.
        inner.list().await.map_err(|e| consumer_error(e, None))?;
        Ok(IdempotentConsumer {
            inner,
            owner: format!("{:016x}", random_u64()),
            reconcile,
            max_wait_ms,
            effect_timeout_ms,
            callback_timeout_ms,
        })
    }

    /// Runs `effect(identity)` unless this identity's effect is already
    /// done. Resolves to `{ status: 'ran' | 'skipped' | 'reconciled',
    /// identity, attempt, result, record }`; throws `EffectError`.
    #[wasm_bindgen(unchecked_return_type = "EffectOutcome")]
    pub async fn handle(
        &self,
        identity: &str,
        #[wasm_bindgen(unchecked_param_type = "(identity: string) => unknown")]
        effect: js_sys::Function,
        #[wasm_bindgen(unchecked_optional_param_type = "HandleOptions")] options: Option<
            js_sys::Object,
        >,
    ) -> Result<JsValue, JsValue> {
        let (reconcile, max_wait_ms, effect_timeout_ms) = match options {
            None => (None, self.max_wait_ms, self.effect_timeout_ms),
            Some(options) => {
                let options: JsValue = options.into();
                let reconcile = input::function(&options, "reconcile")
                    .map_err(|e| effect_error("InvalidOptions", &e, Some(identity)))?;
                let ms = |name: &str, default: u64| {
                    js_sys::Reflect::get(&options, &name.into())
                        .ok()
                        .and_then(|v| v.as_f64())
                        .filter(|n| n.is_finite() && *n >= 0.0)
                        .map_or(default, |n| n as u64)
                };
                let max_wait_ms = ms("maxWaitMs", self.max_wait_ms);
                let effect_timeout_ms = ms("effectTimeoutMs", self.effect_timeout_ms);
                (reconcile, max_wait_ms, effect_timeout_ms)
            }
        };
        let run = DeliveryRun {
            consumer: &self.inner,
            owner: &self.owner,
            identity,
            effect: &effect,
            reconcile: reconcile.as_ref().or(self.reconcile.as_ref()),
            max_wait_ms,
            effect_timeout_ms,
            callback_timeout_ms: self.callback_timeout_ms,
        };
        run.handle()
            .await
            .map(handled)
            .map_err(|f| failure(f, identity))
    }

    /// The record of one identity, or null.
    #[wasm_bindgen(unchecked_return_type = "EffectRecord | null")]
    pub async fn find(&self, identity: &str) -> Result<JsValue, JsValue> {
        let found = self.inner.find(identity).await;
        let found = found.map_err(|e| consumer_error(e, Some(identity)))?;
        Ok(found.as_ref().map_or(JsValue::NULL, to_js))
    }

    /// Every record of the namespace.
    #[wasm_bindgen(unchecked_return_type = "EffectRecord[]")]
    pub async fn records(&self) -> Result<JsValue, JsValue> {
        let listing = self
            .inner
            .list()
            .await
            .map_err(|e| consumer_error(e, None))?;
        Ok(to_js(&listing.records))
    }

    /// Forgets an identity: its next delivery runs the effect again.
    pub async fn forget(&self, identity: &str) -> Result<(), JsValue> {
        self.inner
            .forget(identity)
            .await
            .map_err(|e| consumer_error(e, Some(identity)))
    }

    /// Removes done records older than `olderThanMs` (default 7 days);
    /// started ones are kept. Resolves to how many were removed.
    pub async fn prune(&self, older_than_ms: Option<f64>) -> Result<u32, JsValue> {
        let retention = older_than_ms.map_or(DEFAULT_RETENTION_MS, |ms| ms.max(0.0) as u64);
        let now = time::now() as u64;
        let removed = self.inner.prune(now, retention).await;
        removed
            .map(|n| n as u32)
            .map_err(|e| consumer_error(e, None))
    }

    /// The storage namespace.
    #[wasm_bindgen(getter)]
    pub fn namespace(&self) -> String {
        self.inner.namespace().to_owned()
    }
}
