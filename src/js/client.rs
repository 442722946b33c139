//! `WowClient`: sends commands through the intent journal and the state
//! machine; every failure is thrown as `CommandError` carrying the whole
//! CommandResult and the outcome.

use crate::core::text::text;
use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::input::{self, CommandInput, ConnectInput, Defaults};
use crate::core::journal::{Begun, IntentRecord, IntentState, Journal, JournalError, StoreError};
use crate::core::machine::{MachineConfig, Outcome, Status};
use crate::core::protocol::{CommandStage, ErrorCode, ErrorInfo, StreamElement};
use crate::web::channel::Announcer;
use crate::web::driver::{busy, Client};
use crate::web::history::{History, Hooks};
use crate::web::locks::{scope_lock, try_lock, LockAttempt, PendingLock};
use crate::web::network::WakeListener;
use crate::web::random::CryptoRandom;
use crate::web::storage::{indexed_db, AnyStore};
use crate::web::{object_to_js, time, to_js};

#[wasm_bindgen(module = "/src/js/support.js")]
extern "C" {
    #[wasm_bindgen(js_name = makeCommandError)]
    fn make_command_error(outcome: &JsValue) -> JsValue;
    fn mistake(call: &str, message: &str) -> JsValue;
    #[wasm_bindgen(js_name = makeResultStream)]
    fn make_result_stream(watch: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = watchFor, catch)]
    fn watch_for(options: &JsValue, call: &str) -> Result<JsValue, JsValue>;
    fn abortable(promise: &js_sys::Promise, watch: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = subscribeIntents, catch)]
    fn subscribe_intents(
        channel: &str,
        listener: &JsValue,
        filter: &JsValue,
    ) -> Result<js_sys::Function, JsValue>;
    #[wasm_bindgen(js_name = awaitDownstream)]
    fn await_downstream(
        plan: &JsValue,
        options: &JsValue,
        check: &JsValue,
        headers: &JsValue,
        within_ms: u32,
    ) -> js_sys::Promise;
}

/// Reads call `call`'s options (in `support.js`): the object its drive
/// leaves the latest record in (`watch.outcome`), so an abort can say what
/// was sent, or `None` when there is no signal. `Err` is the error the call
/// fails with at once, before anything is started: a `TypeError` for
/// options it cannot take (an unknown key among them), or a signal aborted
/// already.
fn waiting(options: &Option<JsValue>, call: &str) -> Result<Option<JsValue>, JsValue> {
    let none = JsValue::UNDEFINED;
    watch_for(options.as_ref().unwrap_or(&none), call).map(|w| (!w.is_undefined()).then_some(w))
}

/// `promise`, or the wait for it that the watch's signal can end.
fn ended_by(promise: js_sys::Promise, watch: &Option<JsValue>) -> js_sys::Promise {
    match watch {
        Some(watch) => abortable(&promise, watch),
        None => promise,
    }
}

/// Reads a call's options, or returns from the call with its error.
macro_rules! waiting {
    ($options:expr, $call:expr) => {
        match waiting(&$options, $call) {
            Ok(w) => w,
            Err(e) => return js_sys::Promise::reject(&e),
        }
    };
}

fn failed_outcome(code: &str, message: &str, status: Status, appended: Option<bool>) -> Outcome {
    Outcome {
        status,
        intent_id: String::new(),
        request_id: String::new(),
        intent_key: None,
        appended,
        result: None,
        error: Some(ErrorInfo {
            error_code: ErrorCode::Other(code.to_owned()),
            error_msg: message.to_owned(),
            binding_errors: Vec::new(),
            succeeded: Some(false),
        }),
        downstream_pending: None,
        appended_version: None,
        appended_command_id: None,
        reason: Some(message.to_owned()),
        attempts: 0,
    }
}

fn error(outcome: &Outcome) -> JsValue {
    make_command_error(&to_js(outcome))
}

/// An intent reference from the caller: a non-empty string.
fn intent_ref(value: &JsValue) -> Result<String, JsValue> {
    value
        .as_string()
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| {
            invalid(
                "intent must be a non-empty string: an intentId, a requestId or an intentKey"
                    .to_owned(),
            )
        })
}

fn invalid(message: String) -> JsValue {
    error(&failed_outcome(
        "InvalidCommand",
        &message,
        Status::Rejected,
        Some(false),
    ))
}

/// A mistake in `connect`'s options: a `TypeError`, as a platform API
/// answers a bad argument. No intent exists yet, so no CommandError (it
/// carries an outcome, as if a command had been judged).
fn config_error(message: String) -> JsValue {
    mistake("WowClient.connect", &message)
}

fn journal_error(e: JournalError) -> JsValue {
    let (code, status) = match &e {
        JournalError::Storage(StoreError::Unavailable { .. }) => {
            ("StorageUnavailable", Status::Unknown)
        }
        JournalError::Storage(StoreError::Conflict { .. }) => ("IntentBusy", Status::Unknown),
        JournalError::IntentKeyReused { .. } => ("IntentKeyReused", Status::Rejected),
        JournalError::MissingAggregateId => ("InvalidCommand", Status::Rejected),
        JournalError::NotInConflict { .. } => ("NotInConflict", Status::Rejected),
        JournalError::NotWithdrawable { .. } => ("NotWithdrawable", Status::Rejected),
    };
    let mut outcome = failed_outcome(code, &e.message(), status, Some(false));
    if let JournalError::IntentKeyReused {
        intent_key,
        request_id,
    } = e
    {
        outcome.intent_key = Some(intent_key);
        outcome.request_id = request_id.clone();
        outcome.intent_id = request_id;
        outcome.appended = None;
    }
    error(&outcome)
}

/// The longest delay `setTimeout` keeps (2^31 − 1 ms); a longer one fires at once.
const MAX_TIMER_MS: u32 = 2_147_483_647;

/// A client of one Wow command gateway, over one intent journal.
#[wasm_bindgen]
pub struct WowClient {
    inner: Rc<Client>,
    defaults: Defaults,
    /// Resumes what waits when the runtime comes back online, and looks at
    /// history again then and when the page becomes visible.
    _online: Option<Rc<(WakeListener, WakeListener)>>,
    /// The browser's answer about persistent storage (`persistence`).
    persistence: Rc<RefCell<js_sys::Promise>>,
}

#[wasm_bindgen]
impl WowClient {
    /// Connects: validates options, opens the storage, optionally resumes
    /// unresolved intents in the background. A mistake in the options
    /// rejects with a `TypeError` naming it; a storage that cannot be opened,
    /// with `CommandError` `StorageUnavailable`.
    #[wasm_bindgen(unchecked_return_type = "Promise<WowClient>")]
    pub fn connect(
        #[wasm_bindgen(unchecked_param_type = "ConnectOptions")] options: JsValue,
    ) -> js_sys::Promise {
        super::promise(async move { WowClient::open(options).await.map(JsValue::from) })
    }

    /// Sends a command and waits for its wait stage; resolves to the final
    /// CommandResult, throws `CommandError` for every other outcome.
    #[wasm_bindgen(js_name = sendAndWait, unchecked_return_type = "Promise<CommandResult>")]
    pub fn send_and_wait(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Command")] command: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        let waiting = waiting!(options, "sendAndWait");
        let (me, watch) = (self.shared(), waiting.clone());
        let promise = super::promise(async move {
            let outcome = me.run(command, false, &mut |_| {}, watch.as_ref()).await?;
            if outcome.status == Status::Succeeded {
                Ok(success_value(&outcome))
            } else {
                Err(error(&outcome))
            }
        });
        ended_by(promise, &waiting)
    }

    /// Sends a command and resolves to its `Outcome`; business outcomes
    /// (rejected, conflict, unknown, escalated) do not throw.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn send(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Command")] command: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        let waiting = waiting!(options, "send");
        let (me, watch) = (self.shared(), waiting.clone());
        let promise = super::promise(async move {
            Ok(to_js(
                &me.run(command, false, &mut |_| {}, watch.as_ref()).await?,
            ))
        });
        ended_by(promise, &waiting)
    }

    /// Sends a command over the SSE stage stream. The handle is an async
    /// iterable (and `.stream`, a ReadableStream) of every CommandResult as
    /// its bytes arrive, failed ones included; it throws `CommandError` at
    /// the end unless the outcome succeeded. `.outcome` resolves to the Outcome.
    #[wasm_bindgen(js_name = sendAndWaitStream, unchecked_return_type = "ResultStream")]
    pub fn send_and_wait_stream(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Command")] command: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        let waiting = waiting(&options, "sendAndWaitStream");
        // A mistake in the options (a TypeError) is thrown, as by a
        // platform API, before any stream is made; an aborted signal ends
        // the handle's stream.
        if let Err(e) = &waiting {
            let detail = js_sys::Reflect::get(e, &"detail".into()).unwrap_or(JsValue::UNDEFINED);
            if detail.is_undefined() {
                return Err(e.clone());
            }
        }
        let watch = match &waiting {
            Ok(Some(w)) => w.clone(),
            _ => JsValue::UNDEFINED,
        };
        let parts = make_result_stream(&watch);
        let get = |k: &str| js_sys::Reflect::get(&parts, &k.into()).unwrap_or(JsValue::UNDEFINED);
        let handle = get("handle");
        let push: js_sys::Function = get("push").unchecked_into();
        let finish: js_sys::Function = get("finish").unchecked_into();
        if let Err(e) = waiting {
            let detail = js_sys::Reflect::get(&e, &"detail".into()).unwrap_or(JsValue::NULL);
            let _ = finish.call2(&JsValue::NULL, &detail, &e);
            return Ok(handle);
        }
        let watch = (!watch.is_undefined()).then_some(watch);
        let me = self.shared();
        super::spawn(async move {
            let mut on_element = |e: &StreamElement| {
                let value = match e {
                    StreamElement::Stage(r) => to_js(r),
                    StreamElement::Error { code, body } => match e.command_result() {
                        Some(r) => to_js(r),
                        None => {
                            let info = match body {
                                crate::core::protocol::ResponseBody::ErrorInfo(i) => i.clone(),
                                _ => ErrorInfo {
                                    error_code: code.clone(),
                                    error_msg: String::new(),
                                    binding_errors: Vec::new(),
                                    succeeded: Some(false),
                                },
                            };
                            to_js(&info)
                        }
                    },
                };
                let _ = push.call1(&JsValue::NULL, &value);
            };
            match me.run(command, true, &mut on_element, watch.as_ref()).await {
                Ok(outcome) => {
                    let failure = if outcome.status == Status::Succeeded {
                        JsValue::UNDEFINED
                    } else {
                        error(&outcome)
                    };
                    let _ = finish.call2(&JsValue::NULL, &to_js(&outcome), &failure);
                }
                Err(e) => {
                    let detail =
                        js_sys::Reflect::get(&e, &"detail".into()).unwrap_or(JsValue::NULL);
                    let _ = finish.call2(&JsValue::NULL, &detail, &e);
                }
            }
        });
        Ok(handle)
    }

    /// Drives every persisted unresolved intent of this namespace: each under
    /// its Web Lock, so two tabs never drive the same intent.
    #[wasm_bindgen(unchecked_return_type = "Promise<ResumeReport>")]
    pub fn resume(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        let waiting = waiting!(options, "resume");
        let inner = self.inner.clone();
        inner.history.wake();
        ended_by(
            super::promise(async move { resume_all(&inner, false).await }),
            &waiting,
        )
    }

    /// One intent's record (by intentId, requestId or intentKey), or null
    /// when the journal has none: one read, however long the journal is.
    #[wasm_bindgen(unchecked_return_type = "Promise<IntentRecord | null>")]
    pub fn intent(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] intent: JsValue,
    ) -> js_sys::Promise {
        let inner = self.inner.clone();
        super::promise(async move {
            let found = inner
                .journal
                .find(&intent_ref(&intent)?)
                .await
                .map_err(journal_error)?;
            Ok(found.map_or(JsValue::NULL, |r| to_js(&r)))
        })
    }

    /// The journal's records, oldest first, for UIs.
    #[wasm_bindgen(unchecked_return_type = "Promise<IntentRecord[]>")]
    pub fn intents(&self) -> js_sys::Promise {
        let inner = self.inner.clone();
        super::promise(async move {
            let listing = inner.journal.list().await.map_err(journal_error)?;
            Ok(to_js(&listing.records))
        })
    }

    /// Entries this build cannot read: damaged ones, moved aside (never
    /// dropped), and records of a newer build, left in place for it.
    #[wasm_bindgen(unchecked_return_type = "Promise<QuarantinedEntry[]>")]
    pub fn quarantined(&self) -> js_sys::Promise {
        let inner = self.inner.clone();
        super::promise(async move {
            let listing = inner.journal.list().await.map_err(journal_error)?;
            Ok(to_js(&listing.quarantined))
        })
    }

    /// Asks the history about one intent (by intentId/requestId or business
    /// key) and records the answer. Never sends the command.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn confirm(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] intent: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        let waiting = waiting!(options, "confirm");
        let (me, watch) = (self.shared(), waiting.clone());
        let promise = super::promise(async move { me.confirm_now(intent, watch).await });
        ended_by(promise, &waiting)
    }

    /// Retries an intent that met a version conflict, on the caller's say-so:
    /// the same intent and requestId, now expecting `expectedVersion`
    /// (reload the aggregate, decide, then call this). Resolves to the Outcome.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn retry(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] intent: JsValue,
        #[wasm_bindgen(unchecked_param_type = "{ expectedVersion?: number | null }")]
        decision: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        let waiting = waiting!(options, "retry");
        let (me, watch) = (self.shared(), waiting.clone());
        let promise = super::promise(async move { me.retry_now(intent, decision, watch).await });
        ended_by(promise, &waiting)
    }

    /// Waits, without sending anything, for a stage past PROCESSED of an
    /// intent confirmed appended (an Outcome with `downstreamPending`):
    /// SNAPSHOT by reading the aggregate's snapshot until its version
    /// reaches the appended one, the others by asking `check` (or the
    /// `checkDownstream` connect option). Resolves to the Outcome with
    /// `downstreamReached` set to the stage, or null when `timeoutMs` passed first.
    #[wasm_bindgen(js_name = awaitDownstream, unchecked_return_type = "Promise<DownstreamOutcome>")]
    pub fn await_downstream(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] intent: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DownstreamOptions")] options: Option<
            JsValue,
        >,
    ) -> js_sys::Promise {
        let waiting = waiting!(options, "awaitDownstream");
        let me = self.shared();
        let options = options.unwrap_or(JsValue::UNDEFINED);
        let promise = super::promise(async move { me.downstream_now(intent, options).await });
        ended_by(promise, &waiting)
    }

    /// Withdraws an intent (by intentId, requestId or intentKey) that has
    /// not begun an attempt: a queued one, or one pending and never sent.
    /// It settles `withdrawn`, is never sent, every call waiting on it
    /// rejects with `CommandError` `Withdrawn`, and its scope's next intent
    /// may go. Resolves to its Outcome. An intent that has begun an attempt
    /// may be appended, which only history can tell: the call rejects with
    /// `CommandError` `NotWithdrawable` and changes nothing.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn withdraw(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] intent: JsValue,
    ) -> js_sys::Promise {
        let inner = self.inner.clone();
        super::promise(async move {
            let id = intent_ref(&intent)?;
            let record = match inner.journal.withdraw(time::now(), &id).await {
                Ok(Some(record)) => record,
                Ok(None) => return Err(invalid(text!("no intent `", id, "` in this namespace"))),
                Err(JournalError::NotWithdrawable { record }) => {
                    let why = crate::core::journal::withdrawal_refused(&record);
                    let mut outcome = Outcome::from_record(&record);
                    let refused = failed_outcome("NotWithdrawable", &why, Status::Unknown, None);
                    outcome.error = refused.error;
                    return Err(error(&outcome.because(&why)));
                }
                Err(e) => return Err(journal_error(e)),
            };
            inner.announce(&record, record.revision);
            advance_scope(&inner, record.scope.clone());
            Ok(to_js(&Outcome::from_record(&record)))
        })
    }

    /// Withdraws every queued intent of `scope`, as `withdraw` does each;
    /// resolves to how many. The scope's head (pending, on the wire, or
    /// unknown) is left as it is.
    #[wasm_bindgen(js_name = withdrawScope, unchecked_return_type = "Promise<number>")]
    pub fn withdraw_scope(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] scope: JsValue,
    ) -> js_sys::Promise {
        let inner = self.inner.clone();
        super::promise(async move {
            let scope = scope
                .as_string()
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| invalid("scope must be a non-empty string".into()))?;
            let withdrawn = inner
                .journal
                .withdraw_scope(time::now(), &scope)
                .await
                .map_err(journal_error)?;
            for record in &withdrawn {
                inner.announce(record, record.revision);
            }
            Ok(JsValue::from(withdrawn.len() as u32))
        })
    }

    /// Deletes settled intents older than the retention window.
    #[wasm_bindgen(unchecked_return_type = "Promise<number>")]
    pub fn prune(&self) -> js_sys::Promise {
        let inner = self.inner.clone();
        super::promise(async move {
            let removed = inner.journal.prune(time::now()).await;
            removed
                .map(|n| JsValue::from(n as u32))
                .map_err(journal_error)
        })
    }

    /// Deletes every intent of this namespace (sign-out).
    #[wasm_bindgen(unchecked_return_type = "Promise<number>")]
    pub fn clear(&self) -> js_sys::Promise {
        let inner = self.inner.clone();
        super::promise(async move {
            let removed = inner.journal.clear().await;
            removed
                .map(|n| JsValue::from(n as u32))
                .map_err(journal_error)
        })
    }

    /// Whether the browser keeps this origin's storage under pressure: the
    /// answer to `persistStorage: true` (or to the latest
    /// `requestPersistentStorage()`), else whether it is kept already.
    /// `true`, `false`, or `null` where there is no StorageManager; never
    /// rejects. Pending while a permission prompt waits for the user.
    #[wasm_bindgen(getter, unchecked_return_type = "Promise<boolean | null>")]
    pub fn persistence(&self) -> js_sys::Promise {
        self.persistence.borrow().clone()
    }

    /// Asks the browser to keep this origin's storage under pressure
    /// (`navigator.storage.persist()`); call it from a user gesture where the
    /// browser prompts (Firefox). Resolves as `persistence` does, and becomes
    /// it; `{ signal }` ends the wait for a prompt (CommandError `Aborted`).
    #[wasm_bindgen(
        js_name = requestPersistentStorage,
        unchecked_return_type = "Promise<boolean | null>"
    )]
    pub fn request_persistent_storage(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        let waiting = waiting!(options, "requestPersistentStorage");
        let answer = indexed_db::persistence(true);
        *self.persistence.borrow_mut() = answer.clone();
        ended_by(answer, &waiting)
    }

    /// Calls `listener` with an event per state change of an intent of this
    /// namespace, written by this client, another tab or the Service Worker;
    /// `filter` narrows it (`intentId`, `intentKey`, `states`). Returns the
    /// function that stops it; unsubscribing never withdraws an intent.
    #[wasm_bindgen(unchecked_return_type = "() => void")]
    pub fn subscribe(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(event: IntentEvent) => void")] listener: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "IntentFilter")] filter: Option<JsValue>,
    ) -> Result<js_sys::Function, JsValue> {
        let channel = crate::web::channel::channel_name(self.inner.journal.namespace());
        subscribe_intents(&channel, &listener, &filter.unwrap_or(JsValue::UNDEFINED))
    }

    /// Whether history answers, as this client last learned it: while it
    /// does not, since when, when the probe looks next and how many looks
    /// failed in a row; and how many questions wait for it. Read without
    /// awaiting; `onHistory` tells each change (`historyDown`, `historyBack`).
    #[wasm_bindgen(getter, unchecked_return_type = "HistoryStatus")]
    pub fn history(&self) -> JsValue {
        self.inner.history.status()
    }

    /// The namespace this client's intents live in.
    #[wasm_bindgen(getter)]
    pub fn namespace(&self) -> String {
        self.inner.journal.namespace().to_owned()
    }
}

impl WowClient {
    /// `connect`: validates options, opens the storage, optionally resumes
    /// (public for the Rust-side tests, which hold the client itself).
    pub async fn open(options: JsValue) -> Result<WowClient, JsValue> {
        let parsed = ConnectInput::read(&options).map_err(config_error)?;
        if !(parsed.base_url.starts_with("http://") || parsed.base_url.starts_with("https://")) {
            return Err(config_error(text!(
                "baseUrl `",
                parsed.base_url,
                "` must be an absolute http(s) URL"
            )));
        }
        let callback_timeout_ms = parsed
            .callback_timeout_ms
            .map_or(crate::web::DEFAULT_CALLBACK_TIMEOUT_MS, |ms| {
                u32::try_from(ms).unwrap_or(u32::MAX).min(MAX_TIMER_MS)
            });
        let namespace = parsed.namespace.clone().unwrap_or_else(|| "default".into());
        let store = AnyStore::open_within(&parsed.storage, callback_timeout_ms, &namespace)
            .map_err(|e| journal_error(JournalError::Storage(e)))?;
        let policy = match parsed.request_id.as_deref() {
            None | Some("v7") => crate::core::journal::RequestIdPolicy::RandomV7,
            Some("v4") => crate::core::journal::RequestIdPolicy::RandomV4,
            Some(other) => {
                return Err(config_error(text!(
                    "requestId `",
                    other,
                    "`: use 'v7' or 'v4'"
                )))
            }
        };
        let retention_ms = (parsed.retention_days.unwrap_or(7.0) * 86_400_000.0) as i64;
        let retry = parsed.retry.unwrap_or_default();
        let base = MachineConfig::default();
        let config = MachineConfig {
            caller_timeout_ms: parsed.timeout_ms.unwrap_or(base.caller_timeout_ms),
            max_attempts: retry.max_attempts.unwrap_or(base.max_attempts).max(1),
            retry_base_ms: retry.base_ms.unwrap_or(base.retry_base_ms),
            retry_max_ms: retry.max_ms.unwrap_or(base.retry_max_ms),
            max_confirms: retry.max_confirms.unwrap_or(base.max_confirms).max(1),
            ..base
        };
        let wait_stage = match &parsed.wait_stage {
            Some(s) => input::stage(s).map_err(config_error)?,
            None => crate::core::protocol::CommandStage::Processed,
        };
        // Asked, never awaited: a permission prompt must not hold up a send.
        let persistence = Rc::new(RefCell::new(indexed_db::persistence(
            parsed.persist_storage == Some(true),
        )));
        let base_url = parsed.base_url.trim_end_matches('/').to_owned();
        // One gate per namespace and source of history: a confirmer that
        // takes one question at a time is asked one at a time.
        let custom = parsed.confirm_batch.is_some() || parsed.confirm.is_some();
        let source = if custom {
            String::from("confirm")
        } else {
            base_url.clone()
        };
        let batch = if parsed.confirm_batch.is_none() && custom {
            1
        } else {
            crate::core::machine::history::MAX_BATCH
        };
        let client = WowClient {
            inner: Rc::new(Client {
                journal: Journal::with_float_text(store, &namespace, crate::web::float_text)
                    .with_policy(policy)
                    .with_retention(retention_ms),
                base_url,
                config: config.clone(),
                legacy_timeout: parsed.legacy_wait_timeout.unwrap_or(false),
                headers: parsed.headers.clone(),
                confirmer: parsed.confirm.clone(),
                confirm_batch: parsed.confirm_batch.clone(),
                history: History::new(source, batch),
                announcer: Announcer::open(&namespace),
                callback_timeout_ms,
                offline_return: parsed.offline_return,
                on_escalated: parsed.on_escalated.clone(),
                check_downstream: parsed.check_downstream.clone(),
                on_event: parsed.on_event.clone(),
                on_history: parsed.on_history.clone(),
                trace_context: parsed.trace_context == Some(true),
                waited_here: RefCell::default(),
            }),
            defaults: Defaults {
                config,
                wait_stage,
                wait_timeout_ms: parsed.wait_timeout_ms,
                policy,
                body_limits: {
                    let base = crate::web::JsonLimits::default();
                    let clamp = |v: Option<u64>, d: u32| {
                        v.map_or(d, |v| u32::try_from(v).unwrap_or(u32::MAX))
                    };
                    crate::web::JsonLimits {
                        max_chars: clamp(parsed.max_body_chars, base.max_chars),
                        // Beyond what a JsonValue is read with, a body could not be kept.
                        max_depth: clamp(parsed.max_body_depth, base.max_depth)
                            .min(crate::core::protocol::json_value::MAX_NESTING),
                    }
                },
            },
            _online: None,
            persistence,
        };
        // Verify the storage answers now, not at the first send.
        client.inner.journal.list().await.map_err(journal_error)?;
        let hooks = Hooks {
            look_for: look_for_escalated,
            back: resume_escalated,
        };
        client.inner.history.attach(&client.inner, hooks);
        // Back online: what waits in the journal is driven again, one driver
        // per intent across tabs (the Web Lock), as an automatic resume, and
        // history is looked at again; visible again, history is.
        let weak = Rc::downgrade(&client.inner);
        let online = WakeListener::new(false, move || {
            if let Some(inner) = weak.upgrade() {
                inner.history.wake();
                super::spawn(async move {
                    let _ = resume_all(&inner, true).await;
                });
            }
        });
        let weak = Rc::downgrade(&client.inner);
        let visible = WakeListener::new(true, move || {
            if let Some(inner) = weak.upgrade() {
                inner.history.wake();
            }
        });
        let client = WowClient {
            _online: Some(Rc::new((online, visible))),
            ..client
        };
        if parsed.resume == Some(true) {
            let inner = client.inner.clone();
            super::spawn(async move {
                let _ = resume_all(&inner, true).await;
            });
        }
        Ok(client)
    }

    /// The record a caller's intent reference (intentId, requestId or
    /// intentKey) names in this namespace.
    async fn existing(&self, intent: &JsValue) -> Result<IntentRecord, JsValue> {
        let intent = intent_ref(intent)?;
        self.inner
            .journal
            .find(&intent)
            .await
            .map_err(journal_error)?
            .ok_or_else(|| invalid(text!("no intent `", intent, "` in this namespace")))
    }

    async fn confirm_now(
        &self,
        intent: JsValue,
        watch: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        let record = self.existing(&intent).await?;
        if matches!(record.state, IntentState::Pending | IntentState::Queued) {
            // Persisted, never sent: nothing can have been appended.
            let mut outcome = Outcome::from_record(&record);
            outcome.appended = Some(false);
            return Ok(to_js(&outcome.because("never sent")));
        }
        // Asked by a person: history is looked at now, not at the probe's next look.
        let config = MachineConfig {
            max_attempts: 0,
            confirm_now: true,
            ..self.defaults.config.clone()
        };
        self.inner.history.wake();
        let outcome = drive_locked(&self.inner, record, config, &mut |_| {}, watch.as_ref()).await;
        Ok(to_js(&outcome))
    }

    async fn retry_now(
        &self,
        intent: JsValue,
        decision: JsValue,
        watch: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        let intent = intent_ref(&intent)?;
        // The same reader as every other option: a non-negative integer or null.
        let expected = if decision.is_undefined() || decision.is_null() {
            None
        } else {
            input::CallerFields::of("decision", &decision)
                .and_then(|d| {
                    let expected = d.count("expectedVersion");
                    d.known();
                    d.finish(expected)
                })
                .map_err(|e| mistake("retry", &e))?
        };
        let expected = expected.map(|v| v as i64);
        let record = self
            .inner
            .journal
            .redecide(time::now(), &intent, expected)
            .await
            .map_err(journal_error)?;
        let config = self.defaults.config.clone();
        let outcome = drive_locked(&self.inner, record, config, &mut |_| {}, watch.as_ref()).await;
        Ok(to_js(&outcome))
    }

    /// What `awaitDownstream` needs from the journal and the core (the
    /// record's outcome, the appended version, the snapshot's URL); the
    /// options and the polling are `support.js`'s `awaitDownstream`.
    async fn downstream_now(&self, intent: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
        let record = self.existing(&intent).await?;
        let mut outcome = Outcome::from_record(&record);
        // Kept from history's answer, or from the last answer at PROCESSED or later.
        outcome.appended_version = outcome.appended_version.or_else(|| {
            record
                .last_result
                .as_ref()
                .filter(|r| r.is_succeeded() && r.stage >= CommandStage::Processed)
                .and_then(|r| r.aggregate_version)
        });
        let a = &record.aggregate;
        let snapshot_url = a
            .route()
            .snapshot_path(&a.aggregate_id)
            .map(|path| crate::web::http::url(&self.inner.base_url, &path))
            .ok();
        let plan = object_to_js(|w| {
            w.put("outcome", &outcome)
                .put("aggregate", a)
                .put("waitStage", &record.command.wait.stage)
                .put("snapshotUrl", &snapshot_url)
                .put("timeoutMs", &self.defaults.config.caller_timeout_ms)
                .done()
        });
        let function =
            |f: &Option<js_sys::Function>| f.clone().map_or(JsValue::UNDEFINED, JsValue::from);
        JsFuture::from(await_downstream(
            &plan,
            &options,
            &function(&self.inner.check_downstream),
            &function(&self.inner.headers),
            self.inner.callback_timeout_ms,
        ))
        .await
    }

    /// Another handle on the same client, for a call's future to own.
    fn shared(&self) -> WowClient {
        WowClient {
            inner: self.inner.clone(),
            defaults: self.defaults.clone(),
            _online: self._online.clone(),
            persistence: self.persistence.clone(),
        }
    }

    async fn run(
        &self,
        command: JsValue,
        stream: bool,
        on_element: &mut dyn FnMut(&StreamElement),
        watch: Option<&JsValue>,
    ) -> Result<Outcome, JsValue> {
        let parsed = CommandInput::read(&command, self.defaults.body_limits).map_err(invalid)?;
        let (intent, config) = input::intent(parsed, &self.defaults, stream).map_err(invalid)?;
        let create = intent.command.create;
        let journal = &self.inner.journal;
        // A scoped intent takes its place under the scope's lock, so two
        // tabs writing at the same moment agree on the order.
        let held = match &intent.scope {
            None => None,
            Some(scope) => {
                let held = scope_lock(journal.namespace(), scope, config.caller_timeout_ms).await;
                if held.is_none() {
                    let why = text!(
                        "scope `",
                        scope,
                        "` stayed locked by another tab or worker; nothing was sent"
                    );
                    let busy = failed_outcome("IntentBusy", &why, Status::Unknown, Some(false));
                    return Err(error(&busy));
                }
                held
            }
        };
        let begun = journal
            .begin_for_drive(time::now(), intent, &mut CryptoRandom)
            .await
            .map_err(journal_error);
        drop(held);
        let begun = begun?;
        if let Begun::Created(r) | Begun::Unresolved(r) = &begun {
            if r.state == IntentState::Queued {
                self.inner.announce(r, r.revision);
            }
        }
        let outcome = match begun {
            Begun::Settled(record) => Outcome::from_record(&record),
            Begun::Created(record) | Begun::Unresolved(record) if record.scope.is_some() => {
                drive_in_turn(&self.inner, record, config, on_element, watch).await
            }
            Begun::Created(record) | Begun::Unresolved(record) => {
                drive_locked(&self.inner, record, config, on_element, watch).await
            }
        };
        Ok(outcome.with_create_hint(create))
    }
}

/// Drives one intent under its lock, waiting up to the caller's timeout for
/// another tab or worker that drives it; once held, the record is read
/// again, so an intent settled meanwhile is reported, not driven twice.
async fn drive_locked(
    client: &Rc<Client>,
    record: IntentRecord,
    config: MachineConfig,
    on_element: &mut dyn FnMut(&StreamElement),
    watch: Option<&JsValue>,
) -> Outcome {
    let wait_ms = config.caller_timeout_ms;
    let lock = PendingLock::request(client.journal.namespace(), &record.intent_id, wait_ms);
    // A record not yet written (revision 0) is known to nobody else: its
    // lock, asked for before the record is written, is collected after the
    // first send (see `Client::drive`).
    let scope = record.scope.clone();
    if record.revision == 0 {
        let outcome = client
            .drive(record, config, on_element, Some(lock), watch)
            .await;
        after_drive(client, &outcome, scope);
        return outcome;
    }
    let lock = lock.granted().await.unwrap_or(LockAttempt::Unsupported);
    if matches!(lock, LockAttempt::Busy) {
        return busy(&record);
    }
    let fresh = match client.journal.find(&record.intent_id).await {
        Ok(Some(fresh)) => fresh,
        _ => record,
    };
    // A settled record ends the drive at once, with its recorded outcome.
    let outcome = client.drive(fresh, config, on_element, None, watch).await;
    // Withdrawn between the read and the first attempt's write, which lost:
    // the withdrawal is the outcome.
    let outcome = match outcome.attempts {
        0 if outcome.status == Status::Unknown => {
            match client.journal.find(&outcome.intent_id).await {
                Ok(Some(r)) if r.state == IntentState::Withdrawn => Outcome::from_record(&r),
                _ => outcome,
            }
        }
        _ => outcome,
    };
    after_drive(client, &outcome, scope);
    outcome
}

/// How long a queued intent's caller, next in its scope, waits for an
/// announcement of the intent before it before looking at its scope again
/// anyway (a runtime without BroadcastChannel hears no other tab).
const TURN_POLL_MS: i64 = 2_000;

/// The same for a queued intent with others between it and the scope's head.
const FAR_TURN_POLL_MS: i64 = 10_000;

/// Drives a scoped intent in its turn: while an earlier intent of its
/// scope is unsettled it stays `queued` (its record names the one it waits
/// for), and the caller waits, up to its timeout, for that one to change.
/// An earlier one that nobody drives (its tab was closed) is driven here.
/// When the caller's wait ends first, the outcome says nothing was sent,
/// and the intent is sent in its turn by whoever settles the one before it.
async fn drive_in_turn(
    client: &Rc<Client>,
    record: IntentRecord,
    config: MachineConfig,
    on_element: &mut dyn FnMut(&StreamElement),
    watch: Option<&JsValue>,
) -> Outcome {
    let until = time::now().saturating_add(config.caller_timeout_ms as i64);
    let id = record.intent_id.clone();
    client.waited_here.borrow_mut().push(id.clone());
    let heard = crate::web::channel::Watch::open(client.journal.namespace());
    if let (Some(watch), IntentState::Queued) = (watch, record.state) {
        // An abort while it waits says what was written: its ids, nothing sent.
        let _ = js_sys::Reflect::set(
            watch,
            &"outcome".into(),
            &to_js(&Outcome::from_record(&record)),
        );
    }
    let mut record = record;
    let waited = loop {
        if record.state != IntentState::Queued {
            break None;
        }
        let (ahead, before) = match client.journal.ahead_of(&record).await {
            Ok(Some(ahead)) => ahead,
            Ok(None) => break None,
            // Never a guess: a journal that cannot say whose turn it is
            // sends nothing.
            Err(_) => break Some(record.clone()),
        };
        let drivable = matches!(
            ahead.state,
            IntentState::Pending
                | IntentState::Sending
                | IntentState::Unknown
                | IntentState::Queued
        );
        if drivable && !client.waited_here.borrow().contains(&ahead.intent_id) {
            // Driven here only when no one holds it; never without Web Locks.
            let _ = resume_one(client, ahead.intent_id.clone(), true).await;
        }
        let left = until - time::now();
        if left <= 0 || crate::web::driver::caller_left(watch) {
            break Some(record.clone());
        }
        // Woken by the one just before it (or by its own withdrawal): a
        // burst in one scope wakes one waiter per settled intent, not all.
        // The time bounds the wait where no announcement comes (a runtime
        // without BroadcastChannel, a tab closed mid-drive), longer for
        // those further back.
        let poll = if before == ahead.intent_id {
            TURN_POLL_MS
        } else {
            FAR_TURN_POLL_MS
        };
        heard.next(&before, &id, left.min(poll)).await;
        match client.journal.find(&id).await {
            Ok(Some(fresh)) => record = fresh,
            _ => break Some(record.clone()),
        }
    };
    drop(heard);
    client.waited_here.borrow_mut().retain(|w| *w != id);
    match waited {
        None => drive_locked(client, record, config, on_element, watch).await,
        Some(queued) => {
            // The one before it may have settled just now, while this caller
            // still counted as its driver: look once more.
            advance_scope(client, queued.scope.clone());
            Outcome::from_record(&queued)
        }
    }
}

/// After a drive: an escalated intent waits on the history probe, and a
/// settled one lets the next intent of its scope go.
fn after_drive(client: &Rc<Client>, outcome: &Outcome, scope: Option<String>) {
    match outcome.status {
        Status::Escalated => client.history.park(),
        Status::Succeeded | Status::Rejected | Status::Conflict => advance_scope(client, scope),
        Status::Unknown => {}
    }
}

/// Sends the next intent of `scope` when its turn has come and no caller
/// in this client waits to send it itself: under its lock, as `resume()`
/// does, so one driver sends it across tabs; its own drive's end advances
/// the scope again.
fn advance_scope(client: &Rc<Client>, scope: Option<String>) {
    let Some(scope) = scope else {
        return;
    };
    let weak = Rc::downgrade(client);
    super::spawn(async move {
        let Some(client) = weak.upgrade() else {
            return;
        };
        let Ok(records) = client.journal.in_scope(&scope).await else {
            return;
        };
        let next = crate::core::journal::scope::head(&records, &scope)
            .filter(|r| r.state == IntentState::Queued)
            .map(|r| r.intent_id.clone());
        if let Some(id) = next {
            if !client.waited_here.borrow().contains(&id) {
                let _ = resume_one(&client, id, true).await;
            }
        }
    });
}

/// The history probe's look for what waits on it at rest: the journal's
/// escalated intents, asked about together.
fn look_for_escalated(client: Rc<Client>) {
    super::spawn(async move {
        let Ok(records) = client.journal.unresolved().await else {
            return;
        };
        let escalated: Vec<_> = records
            .iter()
            .filter(|r| r.state == IntentState::Escalated)
            .map(IntentRecord::confirm_query)
            .collect();
        if !escalated.is_empty() {
            client.history.park();
        }
        client.history.note(escalated);
    });
}

/// History answers again: what waited on it is driven, confirm first,
/// each under its lock (the look's answers serve the confirmations).
fn resume_escalated(client: Rc<Client>) {
    super::spawn(async move {
        let _ = resume_all(&client, true).await;
    });
}

/// How many unresolved intents `resume()` drives at once: a journal left
/// with hundreds (a tab closed in the middle of a burst) is finished in
/// windows of this many, not one after another.
const RESUME_WINDOW: usize = 16;

async fn resume_all(client: &Rc<Client>, automatic: bool) -> Result<JsValue, JsValue> {
    let records = client.journal.unresolved().await.map_err(journal_error)?;
    let driven = js_sys::Array::new();
    let busy_ids = js_sys::Array::new();
    for window in records.chunks(RESUME_WINDOW) {
        let drives = js_sys::Array::new();
        for record in window {
            let (client, id) = (client.clone(), record.intent_id.clone());
            drives.push(&super::promise(async move {
                resume_one(&client, id, automatic).await
            }));
        }
        let answers = JsFuture::from(js_sys::Promise::all(&drives)).await?;
        for answer in js_sys::Array::from(&answers).iter() {
            if answer.is_string() {
                busy_ids.push(&answer);
            } else if !answer.is_undefined() {
                driven.push(&answer);
            }
        }
    }
    let report = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&report, &"driven".into(), &driven);
    let _ = js_sys::Reflect::set(&report, &"busy".into(), &busy_ids);
    Ok(report.into())
}

/// Drives one unresolved intent under its lock: its Outcome, its id (a
/// string) when another tab holds it, or undefined when there was nothing to do.
async fn resume_one(client: &Rc<Client>, id: String, automatic: bool) -> Result<JsValue, JsValue> {
    match try_lock(client.journal.namespace(), &id).await {
        Ok(LockAttempt::Busy) => Ok(id.into()),
        // Without Web Locks, only an explicit resume() drives: never race.
        Ok(LockAttempt::Unsupported) | Err(_) if automatic => Ok(JsValue::UNDEFINED),
        lock => {
            let _held = lock;
            // Re-read under the lock: another tab may have settled it meanwhile.
            let fresh = client.journal.find(&id).await.map_err(journal_error)?;
            let Some(fresh) = fresh.filter(|r| r.state.is_resumable()) else {
                return Ok(JsValue::UNDEFINED);
            };
            // A queued intent waits for its turn: the drive that settles the
            // one before it sends it.
            if fresh.state == IntentState::Queued
                && !matches!(client.journal.ahead_of(&fresh).await, Ok(None))
            {
                return Ok(JsValue::UNDEFINED);
            }
            let scope = fresh.scope.clone();
            let outcome = client
                .drive(fresh, client.config.clone(), &mut |_| {}, None, None)
                .await;
            after_drive(client, &outcome, scope);
            Ok(to_js(&outcome))
        }
    }
}

/// What `sendAndWait` resolves to: the final CommandResult, or, when the
/// success was established by asking the history, what it said.
fn success_value(outcome: &Outcome) -> JsValue {
    match &outcome.result {
        Some(r) if r.is_succeeded() => to_js(r),
        _ => object_to_js(|w| {
            w.put("requestId", &outcome.request_id)
                .put("commandId", &outcome.appended_command_id)
                .put("aggregateVersion", &outcome.appended_version)
                .put("errorCode", &"Ok")
                .put("succeeded", &true)
                .put("confirmedByHistory", &true)
                .done()
        }),
    }
}
