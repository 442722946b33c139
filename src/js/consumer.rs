//! `IdempotentConsumer`: code with side effects records each input identity
//! (a domain event id, a message id, a business key) in its own durable
//! store, so a redelivery is skipped, a concurrent delivery waits, and a
//! crash between the effect and its record goes to reconciliation instead
//! of running the effect blindly again.

use crate::core::text::text;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::core::consumer::{Consumer, ConsumerError, EffectRecord, DEFAULT_LEASE_MS};
use crate::core::journal::StoreError;
use crate::web::effects::{DeliveryRun, HandleFailure, Handled};
use crate::web::random::random_u64;
use crate::web::storage::AnyStore;
use crate::web::{time, to_js, JsFailure};

use super::input;

#[wasm_bindgen(module = "/src/js/effect_error.js")]
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

/// An identity from the caller: a string (the core checks its content).
fn identity_of(value: &JsValue) -> Result<String, JsValue> {
    value.as_string().ok_or_else(|| {
        effect_error(
            "InvalidIdentity",
            "identity must be a non-empty string (an event id, a message id, a business key)",
            None,
        )
    })
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
    make_effect_error(code, &e.message(), &identity, &record, &none, &none)
}

fn failure(f: HandleFailure, identity: &str) -> JsValue {
    let id = JsValue::from_str(identity);
    let none = JsValue::UNDEFINED;
    match f {
        HandleFailure::Consumer(e) => consumer_error(e, Some(identity)),
        HandleFailure::Effect(record, thrown) => {
            let message = JsFailure::from(thrown.clone()).text();
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
            &text!(
                "the effect ran but `done` is not recorded: ",
                cause.message()
            ),
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
            let message = JsFailure::from(thrown.clone()).text();
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
            &text!(
                "the effect did not settle within ",
                ms,
                " ms (effectTimeoutMs): whether it took place \
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
    shared: Rc<Shared>,
}

#[wasm_bindgen]
impl IdempotentConsumer {
    /// Opens a consumer over the same storage choices as `WowClient`
    /// (`'indexedDB'`, `'localStorage'`, `'memory'` or an adapter).
    #[wasm_bindgen(unchecked_return_type = "Promise<IdempotentConsumer>")]
    pub fn open(
        #[wasm_bindgen(unchecked_optional_param_type = "ConsumerOptions")] options: JsValue,
    ) -> js_sys::Promise {
        super::promise(async move {
            let shared = Rc::new(Shared::open(options).await?);
            Ok(IdempotentConsumer { shared }.into())
        })
    }

    /// Runs `effect(identity)` unless this identity's effect is already
    /// done. Resolves to `{ status: 'ran' | 'skipped' | 'reconciled',
    /// identity, attempt, result, record }`; throws `EffectError`.
    #[wasm_bindgen(unchecked_return_type = "Promise<EffectOutcome>")]
    pub fn handle(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] identity: JsValue,
        #[wasm_bindgen(unchecked_param_type = "(identity: string) => unknown")] effect: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "HandleOptions")] options: JsValue,
    ) -> js_sys::Promise {
        let shared = self.shared.clone();
        super::promise(async move { shared.handle(identity, effect, options).await })
    }

    /// The record of one identity, or null.
    #[wasm_bindgen(unchecked_return_type = "Promise<EffectRecord | null>")]
    pub fn find(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] identity: JsValue,
    ) -> js_sys::Promise {
        let shared = self.shared.clone();
        super::promise(async move { shared.find(identity).await })
    }

    /// Every record of the namespace.
    #[wasm_bindgen(unchecked_return_type = "Promise<EffectRecord[]>")]
    pub fn records(&self) -> js_sys::Promise {
        let shared = self.shared.clone();
        super::promise(async move { shared.records().await })
    }

    /// Forgets an identity: its next delivery runs the effect again.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn forget(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] identity: JsValue,
    ) -> js_sys::Promise {
        let shared = self.shared.clone();
        super::promise(async move { shared.forget(identity).await })
    }

    /// Removes done records older than `olderThanMs` (default 7 days);
    /// started ones are kept. Resolves to how many were removed.
    #[wasm_bindgen(unchecked_return_type = "Promise<number>")]
    pub fn prune(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "number | null")] older_than_ms: JsValue,
    ) -> js_sys::Promise {
        let shared = self.shared.clone();
        super::promise(async move { shared.prune(older_than_ms).await })
    }

    /// The storage namespace.
    #[wasm_bindgen(getter)]
    pub fn namespace(&self) -> String {
        self.shared.inner.namespace().to_owned()
    }
}

/// What a consumer's calls share (their futures own an `Rc` of it).
struct Shared {
    inner: Consumer<AnyStore>,
    owner: String,
    reconcile: Option<js_sys::Function>,
    max_wait_ms: u64,
    effect_timeout_ms: u64,
    callback_timeout_ms: u32,
}

impl Shared {
    /// Opens a consumer over the same storage choices as `WowClient`
    /// (`'indexedDB'`, `'localStorage'`, `'memory'` or an adapter).
    async fn open(options: JsValue) -> Result<Shared, JsValue> {
        let options = if options.is_null_or_undefined() {
            js_sys::Object::new().into()
        } else {
            options
        };
        let options = if options.is_object() {
            options
        } else {
            return Err(effect_error(
                "InvalidOptions",
                "options must be an object",
                None,
            ));
        };
        let field = |name: &str| crate::web::safe_read::get(&options, name);
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
                        let message = text!(name, " must be a non-negative number");
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
        let store = AnyStore::open_within(&storage, callback_timeout_ms, &namespace)
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
        Ok(Shared {
            inner,
            owner: {
                let mut owner = String::with_capacity(16);
                crate::core::text::push_hex(&mut owner, random_u64(), 16, false);
                owner
            },
            reconcile,
            max_wait_ms,
            effect_timeout_ms,
            callback_timeout_ms,
        })
    }

    /// Runs `effect(identity)` unless this identity's effect is already
    /// done. Resolves to `{ status: 'ran' | 'skipped' | 'reconciled',
    /// identity, attempt, result, record }`; throws `EffectError`.
    async fn handle(
        &self,
        identity: JsValue,
        effect: JsValue,
        options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let identity = &identity_of(&identity)?;
        let effect = crate::web::safe_read::function(&effect).ok_or_else(|| {
            effect_error(
                "InvalidOptions",
                "effect must be a function",
                Some(identity),
            )
        })?;
        let (reconcile, max_wait_ms, effect_timeout_ms) = match options {
            options if options.is_null_or_undefined() => {
                (None, self.max_wait_ms, self.effect_timeout_ms)
            }
            options if !options.is_object() => {
                return Err(effect_error(
                    "InvalidOptions",
                    "options must be an object",
                    Some(identity),
                ))
            }
            options => {
                let reconcile = input::function(&options, "reconcile")
                    .map_err(|e| effect_error("InvalidOptions", &e, Some(identity)))?;
                let ms = |name: &str, default: u64| {
                    crate::web::safe_read::get(&options, name)
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
    async fn find(&self, identity: JsValue) -> Result<JsValue, JsValue> {
        let identity = &identity_of(&identity)?;
        let found = self.inner.find(identity).await;
        let found = found.map_err(|e| consumer_error(e, Some(identity)))?;
        Ok(found.as_ref().map_or(JsValue::NULL, to_js))
    }

    /// Every record of the namespace.
    async fn records(&self) -> Result<JsValue, JsValue> {
        let listing = self
            .inner
            .list()
            .await
            .map_err(|e| consumer_error(e, None))?;
        Ok(to_js(&listing.records))
    }

    /// Forgets an identity: its next delivery runs the effect again.
    async fn forget(&self, identity: JsValue) -> Result<JsValue, JsValue> {
        let identity = &identity_of(&identity)?;
        self.inner
            .forget(identity)
            .await
            .map(|()| JsValue::UNDEFINED)
            .map_err(|e| consumer_error(e, Some(identity)))
    }

    /// Removes done records older than `olderThanMs` (default 7 days);
    /// started ones are kept. Resolves to how many were removed.
    async fn prune(&self, older_than_ms: JsValue) -> Result<JsValue, JsValue> {
        let retention = if older_than_ms.is_null_or_undefined() {
            DEFAULT_RETENTION_MS
        } else {
            match older_than_ms.as_f64() {
                Some(ms) if ms >= 0.0 && ms.is_finite() => ms as u64,
                _ => {
                    return Err(effect_error(
                        "InvalidOptions",
                        "olderThanMs must be a non-negative number",
                        None,
                    ))
                }
            }
        };
        let now = time::now() as u64;
        let removed = self.inner.prune(now, retention).await;
        removed
            .map(|n| JsValue::from(n as u32))
            .map_err(|e| consumer_error(e, None))
    }
}
