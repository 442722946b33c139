//! `WowClient`: each method reads the caller's arguments into the core's
//! terms, starts the call in the client's engine, and hands back the
//! promise its executor settles. It decides nothing and holds no future:
//! every rule is the engine's (`core::engine`), every wait the executor's
//! (`web::executor`). Failures are thrown as `CommandError` carrying the
//! whole CommandResult and the outcome; nobody parses error text.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::input::{self, ConnectInput, Defaults, Settings};
use crate::core::engine::calls::{invalid, journal_failure, Read, SendMode};
use crate::core::engine::{Engine, Reply, ReportValue};
use crate::core::journal::JournalError;
use crate::core::machine::{Outcome, Status, SuccessValue};
use crate::core::protocol::CommandStage;
use crate::web::executor::{CallEntry, Callbacks, Executor, Settler};
use crate::web::random::CryptoRandom;
use crate::web::storage::indexed_db;
use crate::web::LARGE_BODY;
use crate::web::{time, to_js};

#[wasm_bindgen(module = "/src/js/support.js")]
extern "C" {
    #[wasm_bindgen(js_name = makeCommandError)]
    fn make_command_error(outcome: &JsValue) -> JsValue;
    fn mistake(call: &str, message: &str) -> JsValue;
    #[wasm_bindgen(js_name = makeResultStream)]
    fn make_result_stream(of: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = watchFor, catch)]
    fn watch_for(options: &JsValue, call: &str) -> Result<JsValue, JsValue>;
    fn abortable(promise: &js_sys::Promise, signal: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = signOutPurge, catch)]
    fn sign_out_purge(options: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_name = downstreamOptions, catch)]
    fn downstream_options(options: &JsValue) -> Result<JsValue, JsValue>;
    /// A call's `{ promise, resolve, reject }`, ended by a restart or its
    /// client's `free()` if either comes first.
    #[wasm_bindgen(js_name = pendingCall)]
    fn pending_call(outcome: bool, of: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = subscribeIntents, catch)]
    fn subscribe_intents(
        channel: &str,
        listener: &JsValue,
        filter: &JsValue,
        user: &JsValue,
    ) -> Result<js_sys::Function, JsValue>;
}

#[wasm_bindgen(module = "/src/web/runtime.js")]
extern "C" {
    fn hold(promise: &js_sys::Promise) -> js_sys::Promise;
}

#[wasm_bindgen(module = "/src/web/instance.js")]
extern "C" {
    /// The client moves to a fresh instance if this one stops.
    fn carry(client: &JsValue, options: &JsValue, store: &JsValue);
}

/// A `CommandError` carrying `outcome`.
fn error(outcome: &Outcome) -> JsValue {
    make_command_error(&to_js(outcome))
}

/// A mistake in `connect`'s options: a `TypeError`, as a platform API
/// answers a bad argument. No intent exists yet, so no CommandError (it
/// carries an outcome, as if a command had been judged).
fn config_error(message: String) -> JsValue {
    mistake("WowClient.connect", &message)
}

/// An intent reference from the caller: a non-empty string.
fn intent_ref(value: &JsValue) -> Result<String, JsValue> {
    value
        .as_string()
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| {
            error(&invalid(
                "intent must be a non-empty string: an intentId, a requestId or an intentKey",
            ))
        })
}

/// A client of one Wow command gateway, over one intent journal.
#[wasm_bindgen]
pub struct WowClient {
    executor: Rc<Executor>,
    defaults: Defaults,
    /// The browser's answer about persistent storage (`persistence`).
    persistence: RefCell<js_sys::Promise>,
}

impl Drop for WowClient {
    /// `free()` (and `[Symbol.dispose]`): the client lets go of what it
    /// holds at once, and its calls in progress end (`ClientFreed`).
    fn drop(&mut self) {
        self.executor.free();
    }
}

/// A call's promise, its settlers, and what its options asked: the watch
/// (`{ signal, onIntent }`), or the error it fails with at once.
struct Started {
    promise: js_sys::Promise,
    entry: CallEntry,
    watch: JsValue,
}

/// Reads call `name`'s options and makes its promise.
fn started(
    options: &Option<JsValue>,
    name: &'static str,
    executor: &Executor,
) -> Result<Started, JsValue> {
    let watch = watch_for(options.as_ref().unwrap_or(&JsValue::UNDEFINED), name)?;
    let handle = pending_call(name == "send", executor.holdings());
    let get = |k: &str| crate::web::safe_read::get(&handle, k).unwrap_or(JsValue::UNDEFINED);
    let promise: js_sys::Promise = get("promise").unchecked_into();
    let (resolve, reject) = (
        get("resolve").unchecked_into(),
        get("reject").unchecked_into(),
    );
    let on_intent = crate::web::safe_read::get(&watch, "onIntent")
        .and_then(|f| crate::web::safe_read::function(&f));
    Ok(Started {
        promise,
        entry: CallEntry {
            settler: Settler::Promise(resolve, reject),
            name,
            value: JsValue::UNDEFINED,
            on_intent,
            check: None,
            handle,
        },
        watch,
    })
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
        let opened = WowClient::opened(&options, None).and_then(|(client, resume)| {
            let executor = client.executor.clone();
            let mut started = started(&None, "WowClient.connect", &executor)?;
            started.entry.value = JsValue::from(client);
            carry(&started.entry.value, &options, executor.store());
            let call = executor.call(started.entry);
            let now = time::now();
            executor.engine().read(now, call, Read::Connect);
            if resume {
                executor.engine().resume(now, 0, true);
            }
            executor.pump();
            Ok(started.promise)
        });
        match opened {
            Ok(promise) => hold(&promise),
            Err(e) => js_sys::Promise::reject(&e),
        }
    }

    /// The client again, in a fresh instance of the module after its own
    /// stopped (src/web/instance.js): the same options over the same store
    /// (its caller resumes it once the stopped one's locks are free). Not
    /// for callers.
    #[wasm_bindgen(js_name = __reopen, skip_typescript)]
    pub fn reopen(options: JsValue, store: JsValue) -> Result<WowClient, JsValue> {
        WowClient::opened(&options, Some(store)).map(|(client, _)| client)
    }

    /// Sets intent `intent` aside (src/web/instance.js: its handling
    /// stopped the module twice), where unreadable records go. Not for
    /// callers.
    #[wasm_bindgen(js_name = __setAside, skip_typescript)]
    pub fn set_aside(&self, intent: JsValue) -> js_sys::Promise {
        self.read(Read::SetAside(intent.as_string().unwrap_or_default()))
    }

    /// Sends a command and waits for its wait stage; resolves to the final
    /// CommandResult, throws `CommandError` for every other outcome.
    #[wasm_bindgen(js_name = sendAndWait, unchecked_return_type = "Promise<CommandResult>")]
    pub fn send_and_wait(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Command")] command: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        self.send_with(command, options, "sendAndWait", SendMode::AndWait)
    }

    /// Sends a command and resolves to its `Outcome`; business outcomes
    /// (rejected, conflict, unknown, escalated) do not throw.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn send(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Command")] command: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        self.send_with(command, options, "send", SendMode::Outcome)
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
        let watch = watch_for(
            options.as_ref().unwrap_or(&JsValue::UNDEFINED),
            "sendAndWaitStream",
        );
        // A mistake in the options (a TypeError) is thrown, as by a
        // platform API, before any stream is made.
        if let Err(e) = &watch {
            let detail = js_sys::Reflect::get(e, &"detail".into()).unwrap_or(JsValue::UNDEFINED);
            if detail.is_undefined() {
                return Err(e.clone());
            }
        }
        let parts = make_result_stream(self.executor.holdings());
        let get = |k: &str| js_sys::Reflect::get(&parts, &k.into()).unwrap_or(JsValue::UNDEFINED);
        let handle = get("handle");
        let push: js_sys::Function = get("push").unchecked_into();
        let finish: js_sys::Function = get("finish").unchecked_into();
        let watch = match watch {
            Ok(w) => w,
            // A signal aborted already ends the stream.
            Err(e) => {
                let detail = js_sys::Reflect::get(&e, &"detail".into()).unwrap_or(JsValue::NULL);
                let _ = finish.call2(&JsValue::NULL, &detail, &e);
                return Ok(handle);
            }
        };
        let on_intent = crate::web::safe_read::get(&watch, "onIntent")
            .and_then(|f| crate::web::safe_read::function(&f));
        let entry = CallEntry {
            settler: Settler::Stream(push, finish),
            name: "sendAndWaitStream",
            value: JsValue::UNDEFINED,
            on_intent,
            check: None,
            handle: parts,
        };
        self.start_send(command, entry, &watch, SendMode::Stream);
        Ok(handle)
    }

    /// Drives every persisted unresolved intent of this namespace: each under
    /// its Web Lock, so two tabs never drive the same intent.
    #[wasm_bindgen(unchecked_return_type = "Promise<ResumeReport>")]
    pub fn resume(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        self.call(&options, "resume", |engine, now, call, _| {
            engine.resume(now, call, false)
        })
    }

    /// One intent's record (by intentId, requestId or intentKey), or null
    /// when the journal has none: one read, however long the journal is.
    #[wasm_bindgen(unchecked_return_type = "Promise<IntentRecord | null>")]
    pub fn intent(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] intent: JsValue,
    ) -> js_sys::Promise {
        match intent_ref(&intent) {
            Ok(id) => self.read(Read::Intent(id)),
            Err(e) => js_sys::Promise::reject(&e),
        }
    }

    /// The journal's records, oldest first, for UIs.
    #[wasm_bindgen(unchecked_return_type = "Promise<IntentRecord[]>")]
    pub fn intents(&self) -> js_sys::Promise {
        self.read(Read::Intents)
    }

    /// Entries this build cannot read: damaged ones, moved aside (never
    /// dropped), and records of a newer build, left in place for it.
    #[wasm_bindgen(unchecked_return_type = "Promise<QuarantinedEntry[]>")]
    pub fn quarantined(&self) -> js_sys::Promise {
        self.read(Read::Quarantined)
    }

    /// Asks the history about one intent (by intentId/requestId or business
    /// key) and records the answer. Never sends the command.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn confirm(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] intent: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        let id = match intent_ref(&intent) {
            Ok(id) => id,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        self.call(&options, "confirm", |engine, now, call, watched| {
            engine.confirm(now, call, &id, watched)
        })
    }

    /// Retries an intent that met a version conflict, on the caller's say-so:
    /// the same intent and requestId, now expecting `expectedVersion`
    /// (reload the aggregate, decide, then call this). Resolves to the Outcome.
    /// One retried already and on its way (by another tab, or a second
    /// click) is sent once: this call resolves with its outcome. One queued,
    /// escalated or settled otherwise fails with `NotInConflict`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn retry(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] intent: JsValue,
        #[wasm_bindgen(unchecked_param_type = "{ expectedVersion?: number | null }")]
        decision: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        let read = (|| {
            let id = intent_ref(&intent)?;
            // The same reader as every other option: a non-negative integer or null.
            let expected = if decision.is_null_or_undefined() {
                None
            } else {
                input::CallerFields::of("decision", input::Caller(decision.clone()))
                    .and_then(|d| {
                        let expected = d.count("expectedVersion");
                        d.known();
                        d.finish(expected)
                    })
                    .map_err(|e| mistake("retry", &e))?
            };
            Ok::<_, JsValue>((id, expected.map(|v| v as i64)))
        })();
        let (id, expected) = match read {
            Ok(read) => read,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        self.call(&options, "retry", |engine, now, call, watched| {
            engine.retry(now, call, &id, expected, watched)
        })
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
        let read = (|| {
            let id = intent_ref(&intent)?;
            let mut started = started(&options, "awaitDownstream", &self.executor)?;
            let o = downstream_options(options.as_ref().unwrap_or(&JsValue::UNDEFINED))?;
            let get = |k: &str| crate::web::safe_read::get(&o, k).unwrap_or(JsValue::UNDEFINED);
            let stage = get("stage")
                .as_string()
                .and_then(|s| CommandStage::from_header(&s));
            let timeout = get("timeoutMs").as_f64().map(|ms| ms as u64);
            started.entry.check = crate::web::safe_read::function(&get("check"));
            Ok::<_, JsValue>((id, started, stage, timeout))
        })();
        let (id, started, stage, timeout) = match read {
            Ok(read) => read,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        let check = started.entry.check.is_some();
        self.start(started, |engine, now, call, _| {
            engine.downstream(now, call, &id, stage, timeout, check)
        })
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
        let id = match intent_ref(&intent) {
            Ok(id) => id,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        self.call(&None, "withdraw", |engine, now, call, _| {
            engine.withdraw(now, call, &id, false)
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
        let Some(scope) = scope.as_string().filter(|s| !s.trim().is_empty()) else {
            return js_sys::Promise::reject(&error(&invalid("scope must be a non-empty string")));
        };
        self.call(&None, "withdrawScope", |engine, now, call, _| {
            engine.withdraw(now, call, &scope, true)
        })
    }

    /// Deletes settled intents older than the retention window.
    #[wasm_bindgen(unchecked_return_type = "Promise<number>")]
    pub fn prune(&self) -> js_sys::Promise {
        self.read(Read::Prune)
    }

    /// Removes every intent of this client's user on this device, as
    /// `signOut({ purge: true })` does, and keeps the client open: this
    /// client's drives stop, each unresolved intent is removed under its
    /// lock (one another tab drives is left, in `busy`), and the unresolved
    /// ones removed are reported (each may have been appended).
    #[wasm_bindgen(unchecked_return_type = "Promise<SignOutReport>")]
    pub fn clear(&self) -> js_sys::Promise {
        self.call(&None, "clear", |engine, now, call, _| {
            engine.sign_out(now, call, true, false, false)
        })
    }

    /// Signs the user out on this device, then frees the client: its
    /// drives stop and its other calls end (`ClientFreed`). By default the
    /// user's settled intents are removed and its unresolved ones parked
    /// (kept; nobody drives them until the same user connects again).
    /// `{ purge: true }` removes everything of the user here (each
    /// unresolved intent under its lock, reported in `unresolved` so the
    /// app can tell the person; the quarantine and the IndexedDB database
    /// too once nothing of anyone is left in the namespace).
    #[wasm_bindgen(js_name = signOut, unchecked_return_type = "Promise<SignOutReport>")]
    pub fn sign_out(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "SignOutOptions")] options: Option<JsValue>,
    ) -> js_sys::Promise {
        match sign_out_purge(options.as_ref().unwrap_or(&JsValue::UNDEFINED)) {
            Ok(purge) => self.call(&None, "signOut", |engine, now, call, _| {
                engine.sign_out(now, call, purge, true, false)
            }),
            Err(e) => js_sys::Promise::reject(&e),
        }
    }

    /// Makes the intents recorded with no user (by builds before users, or
    /// by a client connected with `user: null`) this client's user's: the
    /// documented way to take over what an app without sign-in left. Each
    /// is rewritten under its lock (one another tab drives is left as it
    /// is); resolves to how many. Nothing for a client with `user: null`.
    #[wasm_bindgen(unchecked_return_type = "Promise<number>")]
    pub fn adopt(&self) -> js_sys::Promise {
        self.call(&None, "adopt", |engine, now, call, _| {
            engine.sign_out(now, call, false, false, true)
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
        let watch = match watch_for(
            options.as_ref().unwrap_or(&JsValue::UNDEFINED),
            "requestPersistentStorage",
        ) {
            Ok(w) => w,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        let answer = indexed_db::persistence(true);
        *self.persistence.borrow_mut() = answer.clone();
        let signal = crate::web::safe_read::get(&watch, "signal").unwrap_or(JsValue::UNDEFINED);
        hold(&abortable(&answer, &signal))
    }

    /// Calls `listener` with an event per state change of an intent of this
    /// client's user in this namespace, written by this client, another tab
    /// or the Service Worker;
    /// `filter` narrows it (`intentId`, `intentKey`, `states`). Returns the
    /// function that stops it; unsubscribing never withdraws an intent.
    #[wasm_bindgen(unchecked_return_type = "() => void")]
    pub fn subscribe(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(event: IntentEvent) => void")] listener: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "IntentFilter")] filter: Option<JsValue>,
    ) -> Result<js_sys::Function, JsValue> {
        let channel = crate::web::channel::channel_name(&self.namespace());
        let filter = filter.unwrap_or(JsValue::UNDEFINED);
        let user = self.executor.engine().config().user.clone();
        let user = user.map_or(JsValue::NULL, |u| JsValue::from_str(&u));
        subscribe_intents(&channel, &listener, &filter, &user)
    }

    /// Whether history answers, as this client last learned it: while it
    /// does not, since when, when the probe looks next and how many looks
    /// failed in a row; and how many questions wait for it. Read without
    /// awaiting; `onHistory` tells each change (`historyDown`, `historyBack`).
    #[wasm_bindgen(getter, unchecked_return_type = "HistoryStatus")]
    pub fn history(&self) -> JsValue {
        self.executor.history()
    }

    /// The namespace this client's intents live in.
    #[wasm_bindgen(getter)]
    pub fn namespace(&self) -> String {
        self.executor.engine().config().namespace.clone()
    }
}

impl WowClient {
    /// `connect`, for the Rust-side tests, which hold the client itself.
    pub async fn open(options: JsValue) -> Result<WowClient, JsValue> {
        let client = wasm_bindgen_futures::JsFuture::from(WowClient::connect(options)).await?;
        use wasm_bindgen::convert::TryFromJsValue;
        WowClient::try_from_js_value(client).map_err(|_| JsValue::from_str("not a WowClient"))
    }

    /// Reads `connect`'s options, opens the store and starts the client's
    /// executor; whether to resume at once.
    fn opened(options: &JsValue, store: Option<JsValue>) -> Result<(WowClient, bool), JsValue> {
        let parsed = ConnectInput::read(input::Caller(options.clone())).map_err(config_error)?;
        let Settings {
            engine,
            defaults,
            within_ms,
        } = parsed.settings().map_err(config_error)?;
        let store = match store {
            Some(store) => store,
            None => crate::web::storage::open(&parsed.storage, within_ms, &engine.namespace)
                .map(JsValue::from)
                .map_err(|e| error(&journal_failure(JournalError::Storage(e))))?,
        };
        let callbacks = Callbacks {
            functions: parsed.functions,
            within_ms,
        };
        let engine = Engine::new(
            engine,
            crate::web::float_text,
            crate::web::iso_time,
            Box::new(CryptoRandom),
        );
        let executor = Executor::start(engine, store, callbacks, settle);
        let client = WowClient {
            executor,
            defaults,
            // Asked, never awaited: a permission prompt must not hold up a send.
            persistence: RefCell::new(indexed_db::persistence(
                parsed.persist_storage == Some(true),
            )),
        };
        Ok((client, parsed.resume == Some(true)))
    }

    fn send_with(
        &self,
        command: JsValue,
        options: Option<JsValue>,
        name: &'static str,
        mode: SendMode,
    ) -> js_sys::Promise {
        match started(&options, name, &self.executor) {
            Ok(started) => {
                let promise = started.promise.clone();
                self.start_send(command, started.entry, &started.watch, mode);
                hold(&promise)
            }
            Err(e) => js_sys::Promise::reject(&e),
        }
    }

    /// Reads the command and starts its send; a command that cannot be
    /// read ends the call at once (`InvalidCommand`), nothing written.
    fn start_send(&self, command: JsValue, entry: CallEntry, watch: &JsValue, mode: SendMode) {
        let executor = &self.executor;
        let call = executor.call(entry);
        let read = input::command(&command, self.defaults.body_limits);
        let watched = self.watching(call, watch);
        let now = time::now();
        let secret = read
            .as_ref()
            .ok()
            .and_then(|c| input::header_mistake(c, &executor.engine().config().secret_headers));
        if let Some(why) = secret {
            executor.engine().refuse(now, call, why);
        } else {
            match read.and_then(|c| input::intent(c, &self.defaults, mode == SendMode::Stream)) {
                Ok((intent, config)) => {
                    let large = intent.command.body.text_len() >= LARGE_BODY;
                    executor.start_send(call, large, move |engine, now| {
                        engine.send(now, call, intent, config, mode, watched)
                    });
                }
                Err(why) => executor.engine().fail(now, call, invalid(&why)),
            }
        }
        executor.pump();
    }

    /// Starts a call: its options read, its promise held while pending.
    fn call(
        &self,
        options: &Option<JsValue>,
        name: &'static str,
        start: impl FnOnce(&mut Engine, i64, crate::core::engine::CallId, bool),
    ) -> js_sys::Promise {
        match started(options, name, &self.executor) {
            Ok(started) => self.start(started, start),
            Err(e) => js_sys::Promise::reject(&e),
        }
    }

    fn start(
        &self,
        started: Started,
        start: impl FnOnce(&mut Engine, i64, crate::core::engine::CallId, bool),
    ) -> js_sys::Promise {
        let Started {
            promise,
            entry,
            watch,
        } = started;
        let call = self.executor.call(entry);
        let watched = self.watching(call, &watch);
        start(&mut self.executor.engine(), time::now(), call, watched);
        self.executor.pump();
        hold(&promise)
    }

    fn read(&self, read: Read) -> js_sys::Promise {
        self.call(&None, "read", |engine, now, call, _| {
            engine.read(now, call, read)
        })
    }

    /// Whether call `call`'s caller may leave or wants its intent's id: its
    /// signal's abort is reported to the engine.
    fn watching(&self, call: crate::core::engine::CallId, watch: &JsValue) -> bool {
        if watch.is_undefined() {
            return false;
        }
        if let Some(signal) =
            crate::web::safe_read::get(watch, "signal").filter(|s| !s.is_null_or_undefined())
        {
            self.executor.on_abort(call, &signal);
        }
        true
    }
}

/// What a call's caller gets at its end.
fn settle(entry: &CallEntry, reply: Reply) {
    let (ok, value) = match reply {
        Reply::Outcome(o) => (true, to_js(&*o)),
        Reply::Succeeded(o) => (true, to_js(&SuccessValue(&o))),
        Reply::Failed(o) => {
            if let Settler::Stream(_, finish) = &entry.settler {
                let _ = finish.call2(&JsValue::NULL, &to_js(&*o), &error(&o));
                return;
            }
            (false, error(&o))
        }
        Reply::StreamOutcome(o) => {
            let failure = if o.status == Status::Succeeded {
                JsValue::UNDEFINED
            } else {
                error(&o)
            };
            if let Settler::Stream(_, finish) = &entry.settler {
                let _ = finish.call2(&JsValue::NULL, &to_js(&*o), &failure);
            }
            return;
        }
        Reply::Record(r) => (true, r.map_or(JsValue::NULL, |r| to_js(&*r))),
        Reply::Records(records) => (true, to_js(&records)),
        Reply::Quarantined(q) => (true, to_js(&q)),
        Reply::Count(n) => (true, JsValue::from(n)),
        Reply::SignedOut(report) => (true, to_js(&*report)),
        Reply::Report { driven, busy } => (true, to_js(&ReportValue(&driven, &busy))),
        Reply::Downstream(o, reached) => {
            let value = to_js(&*o);
            let reached = reached.map_or(JsValue::NULL, |s| JsValue::from_str(s.as_str()));
            let _ = js_sys::Reflect::set(&value, &"downstreamReached".into(), &reached);
            (true, value)
        }
        Reply::Connected => (true, entry.value.clone()),
        Reply::Mistake(why) => (false, mistake(entry.name, &why)),
    };
    if let Settler::Promise(resolve, reject) = &entry.settler {
        let f = if ok { resolve } else { reject };
        let _ = f.call1(&JsValue::NULL, &value);
    }
}
