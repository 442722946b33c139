//! Runs an [`IntentMachine`] against the real world: storage, fetch,
//! confirm queries and timers. Thin on purpose: every decision is the
//! machine's.

use crate::core::text::text;
use wasm_bindgen::prelude::*;

use super::channel::Announcer;
use super::history::History;
use super::http::{self, Answer, Failure};
use super::locks::{IntentLock, LockAttempt, PendingLock};
use super::network;
use super::random::random_u64;
use super::storage::AnyStore;
use super::time;
use super::{call_and_await, to_js, JsFailure};
use crate::core::journal::{Body, IntentRecord, IntentState, Journal};
use crate::core::machine::{
    Action, ConfirmAnswer, IntentMachine, Look, LookAnswer, MachineConfig, Outcome, Said, Status,
    TransportError,
};
use crate::core::protocol::headers::traceparent;
use crate::core::protocol::{ConfirmQuery, JsonValue, StreamElement};

#[wasm_bindgen(module = "/src/web/telemetry.js")]
extern "C" {
    #[wasm_bindgen(js_name = telemetryEvent)]
    fn telemetry_event(sink: &js_sys::Function, kind: &str, record: &str, detail: &str);
}

/// Everything a drive needs.
#[derive(Debug)]
pub struct Client {
    /// The intent journal.
    pub journal: Journal<AnyStore>,
    /// The gateway's base URL.
    pub base_url: String,
    /// Default machine settings.
    pub config: MachineConfig,
    /// Also send `Command-Wait-Timout` (servers before 8.4).
    pub legacy_timeout: bool,
    /// `() → headers` (object or Promise of one): fresh auth headers per request, never persisted.
    pub headers: Option<js_sys::Function>,
    /// A custom confirmer, `(query) → {appended, version?, commandId?}`.
    pub confirmer: Option<js_sys::Function>,
    /// A custom confirmer of many questions at once,
    /// `(queries) → [{aggregateId, requestId, appended, version?, commandId?}]`.
    pub confirm_batch: Option<js_sys::Function>,
    /// Every confirmation goes through it: batched, and one probe while
    /// history is down.
    pub history: std::rc::Rc<History>,
    /// State announcements to other tabs.
    pub announcer: Announcer,
    /// How long `headers` and `confirm` may take (0: unbounded).
    pub callback_timeout_ms: u32,
    /// `offline: "return"`: a drive that meets an offline runtime ends
    /// instead of waiting for it to come back.
    pub offline_return: bool,
    /// `(outcome) → void`: told each time an intent becomes escalated.
    pub on_escalated: Option<js_sys::Function>,
    /// `(question) → boolean`: whether a stage past SNAPSHOT has been reached.
    pub check_downstream: Option<js_sys::Function>,
    /// `(event) → void`: the lifecycle events of what this client drives.
    pub on_event: Option<js_sys::Function>,
    /// `(event) → void`: the history probe's events.
    pub on_history: Option<js_sys::Function>,
    /// Each attempt carries a W3C `traceparent`: the intent's trace, a new span.
    pub trace_context: bool,
    /// Queued intents whose callers wait in this client: each is sent by
    /// its own caller's drive (its stream elements go to that caller), not
    /// by the drive that settled the one before it.
    pub waited_here: std::cell::RefCell<Vec<String>>,
}

impl Client {
    /// Tells `onEvent` about `record` (`telemetry.js` builds the event from
    /// its JSON text without the body, after the current task's work: never
    /// before a send, and a listener that throws or is slow changes
    /// nothing). `detail` is the kind's one extra: an attempt's traceparent,
    /// a confirmation's answer, a retry's due time; or empty.
    #[inline(never)]
    fn tell(&self, kind: &str, record: &IntentRecord, detail: &str) {
        if let Some(sink) = &self.on_event {
            // No event carries the body: the record is written without it.
            let mut shown = record.clone();
            shown.command.body = Body::default();
            telemetry_event(sink, kind, &super::to_text(&shown), detail);
        }
    }

    /// The caller's fresh headers for one request.
    pub async fn extra_headers(&self) -> Result<Vec<(String, String)>, String> {
        let Some(f) = &self.headers else {
            return Ok(Vec::new());
        };
        let value = call_and_await(
            f,
            &JsValue::NULL,
            &[],
            self.callback_timeout_ms,
            "headers()",
        )
        .await
        .map_err(|e| JsFailure::from(e).text())?;
        if value.is_undefined() || value.is_null() {
            return Ok(Vec::new());
        }
        let not_an_object = || "headers() must return an object of strings".to_owned();
        if !value.is_object() || super::safe_read::is_array(&value) != Some(false) {
            return Err(not_an_object());
        }
        let keys = super::safe_read::keys(&value).ok_or_else(not_an_object)?;
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let header = super::safe_read::get(&value, &key).ok_or_else(not_an_object)?;
            if let Some(header) = header.as_string() {
                out.push((key, header));
            }
        }
        Ok(out)
    }

    /// One look of the history gate: through the caller's confirmer (of
    /// many, or of one), or the gateway's event queries.
    pub async fn look(&self, look: &Look) -> LookAnswer {
        let within = self.callback_timeout_ms;
        match (&self.confirm_batch, &self.confirmer) {
            (Some(many), _) => custom_look(many, &look.questions, within).await,
            (None, Some(one)) => {
                let query = &look.questions[0];
                http::one(
                    query,
                    custom_confirm(one, query, look.need_facts, within).await,
                )
            }
            (None, None) => {
                let extra = self.extra_headers().await.unwrap_or_default();
                let within = u32::try_from(self.config.caller_timeout_ms).unwrap_or(u32::MAX);
                http::look_with_gateway(&self.base_url, look, &extra, within).await
            }
        }
    }

    /// Announces a record as written at `revision`.
    pub fn announce(&self, record: &IntentRecord, revision: u64) {
        self.announcer.announce(record, revision);
    }

    /// Drives one intent to an outcome; stream elements go to `on_element`
    /// as they arrive, and each record written goes to `watch.outcome` (as
    /// an Outcome) when the caller's wait can be aborted.
    ///
    /// `lock` is the intent's lock when it was asked for but not awaited: a
    /// new intent's, asked for before its record is first written, so any
    /// other driver that finds the record queues behind it. Only that first
    /// write and the first send run before the answer is collected; the
    /// lock's round trip overlaps the gateway's instead of preceding it.
    ///
    /// While the runtime is offline nothing is sent or asked: the intent
    /// waits in the journal (reason `offline`), and with `offline: "wait"`
    /// the drive, still holding the lock, goes on once the runtime is back
    /// online, with a fresh budget.
    pub async fn drive(
        &self,
        record: IntentRecord,
        config: MachineConfig,
        on_element: &mut dyn FnMut(&StreamElement),
        lock: Option<PendingLock>,
        watch: Option<&JsValue>,
    ) -> Outcome {
        let was_escalated = record.state == IntentState::Escalated;
        let mut lock = Locking {
            pending: lock,
            held: None,
        };
        let mut record = record;
        let outcome = loop {
            let (outcome, offline) = self
                .drive_once(record, config.clone(), on_element, &mut lock, watch)
                .await;
            if !offline || self.offline_return {
                break outcome;
            }
            network::when_online().await;
            record = match self.journal.find(&outcome.intent_id).await {
                Ok(Some(fresh)) => fresh,
                _ => break outcome,
            };
        };
        if outcome.status == Status::Escalated && !was_escalated {
            if let Some(f) = &self.on_escalated {
                // A notification: what it returns or throws changes nothing.
                let _ = f.call1(&JsValue::NULL, &to_js(&outcome));
            }
        }
        outcome
    }

    /// One drive of the machine; true with the outcome when it ended because
    /// the runtime was offline.
    async fn drive_once(
        &self,
        record: IntentRecord,
        config: MachineConfig,
        on_element: &mut dyn FnMut(&StreamElement),
        lock: &mut Locking,
        watch: Option<&JsValue>,
    ) -> (Outcome, bool) {
        let stream = config.stream;
        let confirm_now = config.confirm_now;
        let mut machine = IntentMachine::new(record, config, random_u64());
        let mut sent = false;
        let mut offline = false;
        if !machine.record().attempts.is_empty() {
            mark_sent(watch);
        }
        machine.start(time::now());
        loop {
            while let Some(action) = machine.poll_action() {
                note_caller_left(&mut machine, watch);
                let first_steps = match &action {
                    Action::Persist(_) => machine.record().revision == 0,
                    Action::Send { .. } | Action::OpenStream { .. } => !sent,
                    _ => false,
                };
                if !first_steps && !lock.collect().await {
                    return (busy(machine.record()), false);
                }
                match action {
                    Action::Persist(record) => {
                        let result = self.journal.put(&record).await;
                        if let Ok(revision) = &result {
                            self.announce(&record, *revision);
                            if let Some(watch) = watch {
                                let mut stored = (*record).clone();
                                stored.revision = *revision;
                                let outcome = to_js(&Outcome::from_record(&stored));
                                let _ = js_sys::Reflect::set(watch, &"outcome".into(), &outcome);
                            }
                        }
                        machine.handle_persisted(time::now(), result);
                    }
                    Action::Send { .. } | Action::OpenStream { .. } | Action::Confirm { .. }
                        if !network::is_online() =>
                    {
                        offline = true;
                        machine.handle_offline(time::now());
                    }
                    Action::Send { attempt } | Action::OpenStream { attempt } => {
                        sent = true;
                        self.attempt(&mut machine, attempt, stream, on_element, watch)
                            .await;
                        self.tell("attemptEnded", machine.record(), "");
                    }
                    Action::Confirm { query, need_facts } => {
                        self.tell("confirmAsked", machine.record(), "");
                        let sent = machine.record().attempts.last().map_or(0, |a| a.sent_at);
                        let answer = self.history.ask(query, need_facts, sent, confirm_now).await;
                        let said = match &answer {
                            ConfirmAnswer::Appended { .. } => "appended",
                            ConfirmAnswer::NotAppended => "notAppended",
                            ConfirmAnswer::Unavailable(_) => "unavailable",
                        };
                        self.tell("confirmAnswered", machine.record(), said);
                        machine.handle_confirm(time::now(), answer);
                    }
                    Action::Emit(element) => on_element(&element),
                    // The fetch was aborted by its deadline already.
                    Action::Abort { .. } | Action::Escalate(_) => {}
                    Action::Done(outcome) => {
                        self.tell("outcome", machine.record(), "");
                        return (*outcome, offline);
                    }
                }
            }
            match machine.poll_timeout() {
                Some(at) => {
                    if let Some(due) = machine.retrying_at() {
                        self.tell("retryScheduled", machine.record(), &text!(due));
                    }
                    time::sleep(at - time::now()).await;
                    machine.handle_timeout(time::now().max(at));
                }
                None => {
                    // Unreachable by the machine's contract; never hang,
                    // and never leave a lock granted to nobody.
                    lock.collect().await;
                    let outcome = machine
                        .outcome()
                        .cloned()
                        .unwrap_or_else(|| Outcome::from_record(machine.record()));
                    return (outcome, false);
                }
            }
        }
    }

    async fn attempt(
        &self,
        machine: &mut IntentMachine,
        attempt: u32,
        stream: bool,
        on_element: &mut dyn FnMut(&StreamElement),
        watch: Option<&JsValue>,
    ) {
        let deadline = machine
            .poll_timeout()
            .unwrap_or_else(|| time::now() + 30_000);
        let trace = self
            .trace_context
            .then(|| traceparent(&machine.record().request_id, random_u64()))
            .flatten();
        let extra = match self.extra_headers().await {
            Ok(mut h) => {
                if let Some(value) = &trace {
                    h.push(("traceparent".to_owned(), value.clone()));
                }
                h
            }
            Err(why) => {
                let why = text!("headers(): ", why);
                return machine.handle_transport_error(
                    time::now(),
                    attempt,
                    TransportError::NeverSent(why),
                );
            }
        };
        let request = http::command_request(
            &self.base_url,
            machine.record(),
            stream,
            self.legacy_timeout,
            &extra,
            u32::try_from((deadline - time::now()).max(1)).unwrap_or(u32::MAX),
        );
        let result = match request {
            Err(f) => Err(f),
            Ok(request) => {
                mark_sent(watch);
                self.tell(
                    "attemptSent",
                    machine.record(),
                    trace.as_deref().unwrap_or(""),
                );
                let mut feed = |element: StreamElement| {
                    machine.handle_stream_element(attempt, element);
                    while let Some(action) = machine.poll_action() {
                        if let Action::Emit(e) = action {
                            self.tell("stage", machine.record(), "");
                            on_element(&e);
                        }
                    }
                };
                http::send_attempt(request, stream, &mut feed).await
            }
        };
        note_caller_left(machine, watch);
        let now = time::now();
        match result {
            Ok(Answer::Json(response, retry_after)) => {
                machine.handle_response(now, attempt, *response, retry_after)
            }
            Ok(Answer::StreamEnded { cut }) => machine.handle_stream_end(now, attempt, cut),
            Err(Failure::Aborted) => machine.handle_timeout(now.max(deadline)),
            Err(Failure::NeverSent(why)) => {
                machine.handle_transport_error(now, attempt, TransportError::NeverSent(why))
            }
            Err(Failure::Lost(why)) if !network::is_online() => {
                machine.handle_transport_error(now, attempt, TransportError::Offline(why))
            }
            Err(Failure::Lost(why)) => {
                machine.handle_transport_error(now, attempt, TransportError::Lost(why))
            }
        }
    }
}

/// A drive's lock: asked for and not yet collected, then held until the
/// drive ends.
struct Locking {
    pending: Option<PendingLock>,
    held: Option<IntentLock>,
}

impl Locking {
    /// Collects the answer to a pending lock request, if there is one,
    /// keeping the lock; false when another driver holds it.
    async fn collect(&mut self) -> bool {
        match self.pending.take() {
            Some(lock) => match lock.granted().await {
                Ok(LockAttempt::Held(lock)) => {
                    self.held = Some(lock);
                    true
                }
                Ok(LockAttempt::Busy) => false,
                Ok(LockAttempt::Unsupported) | Err(_) => true,
            },
            None => true,
        }
    }
}

/// Whether the caller's signal aborted (`watch.abortedAt`, set by
/// `support.js`).
pub fn caller_left(watch: Option<&JsValue>) -> bool {
    watch
        .is_some_and(|w| super::safe_read::get(w, "abortedAt").is_some_and(|at| !at.is_undefined()))
}

/// The journal records the caller's abort as what ended its wait.
fn note_caller_left(machine: &mut IntentMachine, watch: Option<&JsValue>) {
    if caller_left(watch) {
        machine.caller_left();
    }
}

/// Tells an abortable wait that a request may have left (`watch.sent`):
/// from then on an abort cannot say "not appended".
fn mark_sent(watch: Option<&JsValue>) {
    if let Some(watch) = watch {
        let _ = js_sys::Reflect::set(watch, &"sent".into(), &JsValue::TRUE);
    }
}

/// The outcome of an intent another tab or worker drives right now.
pub fn busy(record: &IntentRecord) -> Outcome {
    Outcome::from_record(record).because("driven by another tab or worker right now")
}

/// A `ConfirmQuestion` for the caller's confirmer.
fn question(query: &ConfirmQuery, need_facts: bool) -> JsonValue {
    let text = |s: &String| JsonValue::String(s.clone());
    let mut question = vec![
        ("aggregateId".to_owned(), text(&query.aggregate_id)),
        ("requestId".to_owned(), text(&query.request_id)),
        ("resource".to_owned(), text(&query.route.resource)),
    ];
    if let Some(tenant) = &query.route.tenant_id {
        question.push(("tenantId".to_owned(), text(tenant)));
    }
    if let Some(alias) = &query.route.context_alias {
        question.push(("contextAlias".to_owned(), text(alias)));
    }
    question.push(("needFacts".to_owned(), JsonValue::Bool(need_facts)));
    JsonValue::Object(question)
}

/// A confirmer's `{appended, version?, commandId?}`.
fn confirmer_answer(answer: &JsValue) -> ConfirmAnswer {
    let get = |k: &str| super::safe_read::get(answer, k).unwrap_or(JsValue::UNDEFINED);
    match get("appended").as_bool() {
        Some(true) => ConfirmAnswer::Appended {
            version: get("version").as_f64().map(|v| v as i64),
            command_id: get("commandId").as_string(),
        },
        Some(false) => ConfirmAnswer::NotAppended,
        None => {
            ConfirmAnswer::Unavailable("the confirmer did not say `appended: true|false`".into())
        }
    }
}

/// Calls the caller's confirmer with the question as a plain object.
async fn custom_confirm(
    f: &js_sys::Function,
    query: &ConfirmQuery,
    need_facts: bool,
    within_ms: u32,
) -> ConfirmAnswer {
    let q = super::typed_to_js(&question(query, need_facts));
    match call_and_await(f, &JsValue::NULL, &[&q], within_ms, "confirm()").await {
        Ok(answer) => confirmer_answer(&answer),
        Err(e) => ConfirmAnswer::Unavailable(JsFailure::from(e).text()),
    }
}

/// Calls the caller's `confirmBatch` with the questions (each wanting its
/// stream's facts): each answer is matched to its question by the
/// aggregateId and requestId it names; one that names none is no evidence.
async fn custom_look(f: &js_sys::Function, queries: &[ConfirmQuery], within_ms: u32) -> LookAnswer {
    let all = JsonValue::Array(queries.iter().map(|q| question(q, true)).collect());
    let answers = match call_and_await(
        f,
        &JsValue::NULL,
        &[&super::typed_to_js(&all)],
        within_ms,
        "confirmBatch()",
    )
    .await
    {
        Ok(v) => v,
        Err(e) => return LookAnswer::Unavailable(JsFailure::from(e).text()),
    };
    let Some(answers) = super::safe_read::elements(&answers) else {
        return LookAnswer::Unavailable("confirmBatch() did not answer an array".into());
    };
    let said = answers
        .iter()
        .filter_map(|a| {
            let id = |k: &str| super::safe_read::get(a, k)?.as_string();
            Some(Said {
                aggregate_id: id("aggregateId")?,
                request_id: id("requestId")?,
                answer: confirmer_answer(a),
            })
        })
        .collect();
    LookAnswer::Said {
        said,
        complete: false,
    }
}
