//! `IntentRecord`: everything needed to recognise, confirm and retry one
//! business intent after a timeout, a reload or a crash.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::protocol::json_codec::{read_name, wire_name, wire_object, wire_variant, UNKNOWN_NAME};
use crate::protocol::{
    AggregateRoute, CommandResult, CommandStage, ConfirmQuery, FromJson, JsonError, JsonOut,
    JsonValue, ObjectReader, ObjectWriter, ToJson, WaitPlan, WaitTail,
};

/// The first schema: a record without a scope, in a state every build knows.
pub(crate) const FIRST_SCHEMA_VERSION: u32 = 1;

// Schema 2: a record in a scope, or queued, or withdrawn, before the body
// was stored as text. A build before scopes leaves such a record alone (a
// newer schema), so it never sends a scoped intent out of its turn nor
// moves a record in a state it does not know aside.

/// The schema of a record whose command's body is stored as its JSON text
/// (a string), so that a state change copies one string into storage, not
/// a tree of values to clone and read back.
pub(crate) const BODY_TEXT_SCHEMA_VERSION: u32 = 3;

/// The schema this build writes every record in: as version 3, with the
/// user the intent was made under (`user`; absent for an app without
/// sign-in). Builds before it leave such a record alone (a newer schema):
/// they know no users, so they never send one user's intent with another
/// user's credentials. This build reads versions 1 to 4; a record of an
/// earlier one carries no user.
pub(crate) const SCHEMA_VERSION: u32 = 4;

wire_object! {
    /// Where an intent's aggregate lives.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct AggregateIdentity {
        /// Context alias in paths, when the aggregate is in another context.
        #[serde(skip_serializing_if = "Option::is_none")]
        context_alias: Option<String> => "contextAlias" some / opt,
        /// Resource name, e.g. `account`.
        resource: String => "resource" put / or_default,
        /// Tenant, when the aggregate has no static tenant.
        #[serde(skip_serializing_if = "Option::is_none")]
        tenant_id: Option<String> => "tenantId" some / opt,
        /// Owner, when the aggregate is owned.
        #[serde(skip_serializing_if = "Option::is_none")]
        owner_id: Option<String> => "ownerId" some / opt,
        /// The aggregate id: always known, client-generated for creates whose
        /// id the server would otherwise generate (so the outcome can be confirmed).
        aggregate_id: String => "aggregateId" put / or_default,
    }
}

impl AggregateIdentity {
    /// The route of the aggregate type (for the confirm query).
    pub fn route(&self) -> AggregateRoute {
        AggregateRoute {
            prefix: None,
            context_alias: self.context_alias.clone(),
            tenant_id: self.tenant_id.clone(),
            owner_id: self.owner_id.clone(),
            resource: self.resource.clone(),
        }
    }
}

wire_object! {
    /// What to wait for, as persisted.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    pub struct WaitSpec {
        /// Target stage.
        stage: CommandStage => "stage" put / req,
        /// Context filter.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String> => "context" some / opt,
        /// Processor filter.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        processor: Option<String> => "processor" some / opt,
        /// Function filter.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        function: Option<String> => "function" some / opt,
        /// Chain tail stage (with `SAGA_HANDLED`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tail_stage: Option<CommandStage> => "tailStage" some / opt,
        /// Server-side wait deadline, ms.
        timeout_ms: u64 => "timeoutMs" put / req,
    }
}

impl From<&WaitPlan> for WaitSpec {
    fn from(p: &WaitPlan) -> WaitSpec {
        WaitSpec {
            stage: p.stage,
            context: p.context.clone(),
            processor: p.processor.clone(),
            function: p.function.clone(),
            tail_stage: p.tail.as_ref().map(|t| t.stage),
            timeout_ms: p.timeout_ms,
        }
    }
}

impl WaitSpec {
    /// The wait plan to send.
    pub fn plan(&self) -> WaitPlan {
        WaitPlan {
            stage: self.stage,
            context: self.context.clone(),
            processor: self.processor.clone(),
            function: self.function.clone(),
            tail: self.tail_stage.map(|stage| WaitTail {
                stage,
                context: None,
                processor: None,
                function: None,
            }),
            timeout_ms: self.timeout_ms,
        }
    }
}

/// A command's body: one value shared by every copy of its record (a drive
/// copies the record for each write), and its JSON text written once, then
/// reused by every write of the record and every attempt's request: a large
/// body costs one serialisation per drive, not one per write.
#[derive(Clone, Debug)]
pub struct Body(Rc<BodyValue>);

#[derive(Debug)]
struct BodyValue {
    /// The value, when the body was given as one (a new intent's); a body
    /// read from a schema-3 record is its text alone, never parsed.
    value: Option<JsonValue>,
    /// Its text as the host holds it (the caller's own string), for a large
    /// body: requests and writes hand the host that, not a copy of the text.
    held: Option<HeldText>,
    /// Its JSON text, and that text as a JSON string (its stored form),
    /// each once written (a body's text is never empty).
    text: RefCell<[String; 2]>,
    /// The fingerprint's text of its non-integral numbers, by their bits,
    /// where they were placed from the text the body was read from.
    floats: Vec<(u64, String)>,
}

impl Body {
    fn of(value: Option<JsonValue>, text: String) -> Body {
        Body::read(value, text, Vec::new())
    }

    fn read(value: Option<JsonValue>, text: String, floats: Vec<(u64, String)>) -> Body {
        Body::held(value, text, floats, None)
    }

    fn held(
        value: Option<JsonValue>,
        text: String,
        mut floats: Vec<(u64, String)>,
        held: Option<Box<dyn Any>>,
    ) -> Body {
        floats.sort_unstable_by_key(|(bits, _)| *bits);
        Body(Rc::new(BodyValue {
            value,
            held: held.map(HeldText),
            text: RefCell::new([text, String::new()]),
            floats,
        }))
    }

    /// A caller's body read from JSON text: its value, its own JSON text,
    /// and the fingerprint's text of the non-integral numbers
    /// placed from it ([`crate::protocol::json_text`]); `held`: that
    /// same text as the host holds it, handed back to the host in its place
    /// (see [`Body::held_text`]).
    pub fn from_caller(
        value: JsonValue,
        text: String,
        floats: Vec<(u64, String)>,
        held: Option<Box<dyn Any>>,
    ) -> Body {
        Body::held(Some(value), text, floats, held)
    }

    /// Its JSON text as the host holds it, where the host gave it so: a
    /// request sends that, and a record's write leaves a hole for it
    /// ([`StoredText`]), so a large body's text is never copied out again.
    pub fn held_text(&self) -> Option<&dyn Any> {
        self.0.held.as_ref().map(|h| &*h.0)
    }

    /// The fingerprint's text of `f`, where it was placed when the body
    /// was read.
    pub fn float_text(&self, f: f64) -> Option<&str> {
        let floats = &self.0.floats;
        let at = floats
            .binary_search_by_key(&f.to_bits(), |(bits, _)| *bits)
            .ok()?;
        Some(&floats[at].1)
    }

    /// A body of `value`.
    pub fn new(value: JsonValue) -> Body {
        Body::of(Some(value), String::new())
    }

    /// A stored body: its JSON text, as a schema-3 record keeps it.
    pub(crate) fn from_text(text: String) -> Body {
        Body::of(None, text)
    }

    /// A body read from a schema-3 record: its value, a string, is its
    /// text (a record's public form, never read back, has the value).
    fn stored(&mut self) {
        if let Some(JsonValue::String(text)) = &self.0.value {
            if !text.is_empty() {
                *self = Body::from_text(text.clone());
            }
        }
    }

    /// The length of its JSON text where it is written already (the room a
    /// fingerprint's text needs), else 0.
    pub fn text_len(&self) -> usize {
        self.0.text.borrow()[0].len()
    }

    /// The body's value; null for a body read as text (its fingerprint is
    /// in its record: nothing reads a stored body's value).
    pub fn value(&self) -> &JsonValue {
        self.0.value.as_ref().unwrap_or(&JsonValue::Null)
    }
}

impl From<JsonValue> for Body {
    fn from(value: JsonValue) -> Body {
        Body::new(value)
    }
}

impl Default for Body {
    fn default() -> Body {
        Body::new(JsonValue::Null)
    }
}

/// A body's text held by the host (opaque to the core).
struct HeldText(Box<dyn Any>);

impl std::fmt::Debug for HeldText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HeldText")
    }
}

/// A record's stored text, its body left out where the host holds the
/// body's text ([`Body::held_text`]): the whole text is `text` with the
/// body's stored form (its text as a JSON string) inserted at byte
/// `hole.0`, where the record's `command.body` goes.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredText {
    /// The record's JSON text (without the held body).
    pub text: String,
    /// Where the held body goes, and the body.
    pub hole: Option<(usize, Body)>,
}

impl StoredText {
    /// The whole text, the held body written in (for a store the host does
    /// not fill, and tests).
    pub fn whole(&self) -> String {
        match &self.hole {
            None => self.text.clone(),
            Some((at, body)) => {
                let mut out = String::with_capacity(self.text.len() + body.text_len() + 2);
                out.push_str(&self.text[..*at]);
                crate::protocol::json_value::write_string(&body.0.text.borrow()[0], &mut out);
                out.push_str(&self.text[*at..]);
                out
            }
        }
    }
}

/// The same value, or the same text where one of them is text alone (a
/// text once written: a stored body's always is).
impl PartialEq for Body {
    fn eq(&self, other: &Body) -> bool {
        match (&self.0.value, &other.0.value) {
            (Some(a), Some(b)) => a == b,
            _ => {
                let (a, b) = (self.0.text.borrow(), other.0.text.borrow());
                !a[0].is_empty() && a[0] == b[0]
            }
        }
    }
}

/// The body's JSON text, written on the first call with `out`'s number
/// writer (a process writes records with one: the engine's in the shipped
/// modules).
impl ToJson for Body {
    fn write_json(&self, out: &mut JsonOut) {
        Stored(self, Form::Value).write_json(out)
    }
}

/// A record's part as written, its body in `.1`'s form.
struct Stored<'a, T>(&'a T, Form<'a>);

/// How a record's body is written.
#[derive(Clone, Copy)]
enum Form<'a> {
    /// As the value it is (before schema 3, and a record's public form).
    Value,
    /// As the JSON string of its text (schema 3 and later).
    Text,
    /// As `Text`, but a body the host holds is left out, its place kept.
    Hole(&'a Cell<Option<usize>>),
}

impl ToJson for Stored<'_, Body> {
    fn write_json(&self, out: &mut JsonOut) {
        let Stored(body, form) = *self;
        if let (Form::Hole(at), Some(_)) = (form, &body.0.held) {
            at.set(Some(out.text.len()));
            return;
        }
        let stored = !matches!(form, Form::Value);
        let mut text = body.0.text.borrow_mut();
        let [value_text, quoted] = &mut *text;
        if let Some(value) = body.0.value.as_ref().filter(|_| value_text.is_empty()) {
            value.write_text::<false, _>(value_text, &out.float());
        }
        // Room made once for a large body (not grown by doubling, a copy and
        // a grown memory each time).
        if !stored {
            out.text.reserve(value_text.len());
            out.text.push_str(value_text);
            return;
        }
        if quoted.is_empty() {
            quoted.reserve(value_text.len() + value_text.len() / 8 + 2);
            crate::protocol::json_value::write_string(value_text, quoted);
        }
        out.text.reserve(quoted.len());
        out.text.push_str(quoted);
    }
}

impl Serialize for Body {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0.value {
            Some(value) => value.serialize(s),
            #[cfg(any(test, feature = "json-text"))]
            None => serde_json::from_str::<JsonValue>(&self.0.text.borrow()[0])
                .map_err(serde::ser::Error::custom)?
                .serialize(s),
            #[cfg(not(any(test, feature = "json-text")))]
            None => s.serialize_unit(),
        }
    }
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        JsonValue::deserialize(d).map(Body::new)
    }
}

/// The command of an intent, exactly as every attempt sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CommandSpec {
    /// HTTP method.
    pub method: String,
    /// Path relative to the gateway's base URL.
    pub path: String,
    /// The command body.
    pub body: Body,
    /// Expected current version, when the caller pinned one. Never bumped
    /// silently (DESIGN rule 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_version: Option<i64>,
    /// Whether the command creates its aggregate.
    #[serde(default)]
    pub create: bool,
    /// The wait plan.
    pub wait: WaitSpec,
    /// Extra non-secret headers (`Command-Header-*` and the like). Auth
    /// headers are never persisted: they are asked for per attempt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
}

/// Where an intent stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum IntentState {
    /// Persisted; nothing has been sent yet.
    #[default]
    Pending,
    /// An attempt is (or was, before a crash) on the wire.
    Sending,
    /// The outcome is not known; history must be asked.
    Unknown,
    /// Settled: the command succeeded (confirmed appended).
    Succeeded,
    /// Settled: the command was refused.
    Rejected,
    /// Settled until the caller decides: a version or identity conflict.
    Conflict,
    /// History could not be asked; a person or an operations path must look.
    Escalated,
    /// Persisted, nothing sent: it waits while an earlier intent of its
    /// scope is unsettled (`waitsFor` names the one it waits for).
    Queued,
    /// Settled: withdrawn by the caller before any attempt began; nothing
    /// was sent.
    Withdrawn,
}

impl IntentState {
    /// Every state.
    pub const ALL: [IntentState; 9] = [
        IntentState::Pending,
        IntentState::Sending,
        IntentState::Unknown,
        IntentState::Succeeded,
        IntentState::Rejected,
        IntentState::Conflict,
        IntentState::Escalated,
        IntentState::Queued,
        IntentState::Withdrawn,
    ];

    /// Settled: a replay of the same key returns the outcome without
    /// sending (a withdrawn one, or one refused before the bus, is sent
    /// again: nothing of it was done). A settled intent releases the next
    /// one of its scope.
    pub(crate) const fn is_settled(self) -> bool {
        matches!(
            self,
            IntentState::Succeeded
                | IntentState::Rejected
                | IntentState::Conflict
                | IntentState::Withdrawn
        )
    }

    /// Unresolved: `resume()` drives it (a queued one when its turn comes).
    pub(crate) const fn is_unresolved(self) -> bool {
        matches!(
            self,
            IntentState::Pending
                | IntentState::Sending
                | IntentState::Unknown
                | IntentState::Queued
        )
    }

    /// Driven by `resume()`: unresolved, or escalated (confirmed again first).
    pub(crate) const fn is_resumable(self) -> bool {
        self.is_unresolved() || matches!(self, IntentState::Escalated)
    }

    /// Whether retention may prune it (unknown and escalated never).
    pub(crate) const fn is_prunable(self) -> bool {
        self.is_settled()
    }
}

/// What one attempt ended in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AttemptOutcome {
    /// The target stage was reached successfully.
    Succeeded,
    /// A failure with this error code.
    Failed(String),
    /// Nothing conclusive: a timeout, a cut connection, a 5xx.
    Unknown(String),
}

wire_object! {
    /// One send of the intent, always with the intent's requestId.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Attempt {
        /// 1-based attempt number.
        number: u32 => "number" put / req,
        /// When it was sent (epoch ms).
        sent_at: i64 => "sentAt" put / req,
        /// The server's commandId, once any answer carried it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command_id: Option<String> => "commandId" some / opt,
        /// When it ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ended_at: Option<i64> => "endedAt" some / opt,
        /// How it ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<AttemptOutcome> => "outcome" some / opt,
        /// When the caller's wait for it was due to end (epoch ms).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caller_deadline: Option<i64> => "callerDeadline" some / opt,
        /// What ended the caller's wait for it (`cancelled`: its signal aborted; the drive went on).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wait_ended_by: Option<WaitEnd> => "waitEndedBy" some / opt,
    }
}

/// What ended the caller's wait for one attempt: with the aggregate, the
/// ids, the wait stage and the error code, what a diagnosis needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WaitEnd {
    /// An answer (a JSON body, or a stream that ended cleanly).
    Answer,
    /// The caller's timeout.
    Timeout,
    /// The caller cancelled: its signal aborted (the drive went on without it).
    Cancelled,
    /// The stage stream was cut.
    StreamCut,
    /// The connection failed; the request may have arrived.
    Lost,
    /// The request never left.
    NotSent,
    /// The connection failed while the runtime reported being offline.
    Offline,
}

impl WaitEnd {
    pub(crate) const WIRE: [(WaitEnd, &'static str); 7] = [
        (WaitEnd::Answer, "answer"),
        (WaitEnd::Timeout, "timeout"),
        (WaitEnd::Cancelled, "cancelled"),
        (WaitEnd::StreamCut, "streamCut"),
        (WaitEnd::Lost, "lost"),
        (WaitEnd::NotSent, "notSent"),
        (WaitEnd::Offline, "offline"),
    ];
}

impl ToJson for WaitEnd {
    fn write_json(&self, out: &mut JsonOut) {
        wire_name(&WaitEnd::WIRE, self, out)
    }
}

impl FromJson for WaitEnd {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        wire_variant(&WaitEnd::WIRE, &value)?.ok_or(UNKNOWN_NAME)
    }
}

/// One business intent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntentRecord {
    /// Schema version of this record.
    pub schema_version: u32,
    /// Storage namespace (user / tenant separation).
    pub namespace: String,
    /// The user it was made under (`connect({ user })`); `None` for an app
    /// without sign-in, and for every record of a schema before 4. Only a
    /// client of that user sends, retries or resumes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The intent's id; equal to its requestId (one intent, one requestId).
    pub intent_id: String,
    /// The caller's business key, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_key: Option<String>,
    /// The idempotency key, sent on every attempt.
    pub request_id: String,
    /// The aggregate.
    pub aggregate: AggregateIdentity,
    /// The command.
    pub command: CommandSpec,
    /// SHA-1 of the canonical payload.
    pub fingerprint: String,
    /// Where it stands.
    pub state: IntentState,
    /// Every send so far.
    #[serde(default)]
    pub attempts: Vec<Attempt>,
    /// The last CommandResult seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_result: Option<CommandResult>,
    /// Why it is unknown, escalated or in conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether history holds the intent's events, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appended: Option<bool>,
    /// The appended stream's version, when history or an answer said it
    /// (what `awaitDownstream` compares a snapshot's version with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appended_version: Option<i64>,
    /// Created (epoch ms).
    pub created_at: i64,
    /// Last changed (epoch ms).
    pub updated_at: i64,
    /// Compare-and-swap revision: 0 before the first write.
    #[serde(default)]
    pub revision: u64,
    /// The scope whose intents are sent one after another, in `scope_seq` order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Its place in the scope: given under the scope's lock when the record
    /// is first written, so every tab agrees on the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_seq: Option<u64>,
    /// While queued: the earlier intent of the scope it waits for, the last
    /// one unsettled when it was written (its turn comes when that one settles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits_for: Option<String>,
}

impl IntentRecord {
    /// Whether it was refused before anything reached the command bus: a
    /// rejection with nothing appended whose last answer, if any, came at
    /// SENT (the gateway's own checks, a proxy's refusal, a request that
    /// never left). A rejection at PROCESSED or later was the server's
    /// decision about the command and is replayed, never re-sent.
    pub(crate) fn refused_before_the_bus(&self) -> bool {
        self.state == IntentState::Withdrawn
            || self.state == IntentState::Rejected
                && self.appended == Some(false)
                && self
                    .last_result
                    .as_ref()
                    .is_none_or(|r| r.stage == CommandStage::Sent)
    }

    /// The authoritative question for this intent (PROTOCOL §5.4).
    pub(crate) fn confirm_query(&self) -> ConfirmQuery {
        ConfirmQuery {
            route: self.aggregate.route(),
            aggregate_id: self.aggregate.aggregate_id.clone(),
            request_id: self.request_id.clone(),
        }
    }
}

impl ToJson for CommandSpec {
    fn write_json(&self, out: &mut JsonOut) {
        Stored(self, Form::Value).write_json(out)
    }
}

impl ToJson for Stored<'_, CommandSpec> {
    fn write_json(&self, out: &mut JsonOut) {
        let Stored(c, form) = *self;
        ObjectWriter::new(out)
            .put("method", &c.method)
            .put("path", &c.path)
            .put("body", &Stored(&c.body, form))
            .some("expectedVersion", &c.expected_version)
            .put("create", &c.create)
            .put("wait", &c.wait)
            .non_empty("headers", &c.headers)
            .done()
    }
}

impl FromJson for CommandSpec {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        let mut o = ObjectReader::of(value)?;
        let read = CommandSpec {
            method: o.req("method"),
            path: o.req("path"),
            body: Body::new(o.any("body")),
            expected_version: o.opt("expectedVersion"),
            create: o.or_default("create"),
            wait: o.req("wait"),
            headers: o.or_default("headers"),
        };
        o.finish(read)
    }
}

impl IntentState {
    /// The wire name (`"pending"`, `"sending"`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            IntentState::Pending => "pending",
            IntentState::Sending => "sending",
            IntentState::Unknown => "unknown",
            IntentState::Succeeded => "succeeded",
            IntentState::Rejected => "rejected",
            IntentState::Conflict => "conflict",
            IntentState::Escalated => "escalated",
            IntentState::Queued => "queued",
            IntentState::Withdrawn => "withdrawn",
        }
    }
}

impl IntentState {
    /// The state a wire name stands for; `None` for one this build does not know.
    pub(crate) fn of_name(name: &str) -> Option<IntentState> {
        IntentState::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

impl ToJson for IntentState {
    fn write_json(&self, out: &mut JsonOut) {
        self.as_str().write_json(out)
    }
}

impl FromJson for IntentState {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        IntentState::of_name(read_name(&value)?).ok_or(UNKNOWN_NAME)
    }
}

impl ToJson for AttemptOutcome {
    fn write_json(&self, out: &mut JsonOut) {
        match self {
            AttemptOutcome::Succeeded => "succeeded".write_json(out),
            AttemptOutcome::Failed(code) => ObjectWriter::new(out).put("failed", code).done(),
            AttemptOutcome::Unknown(why) => ObjectWriter::new(out).put("unknown", why).done(),
        }
    }
}

impl FromJson for AttemptOutcome {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        if value.as_str() == Some("succeeded") {
            return Ok(AttemptOutcome::Succeeded);
        }
        let mut o = ObjectReader::of(value)?;
        let read = (o.opt::<String>("failed"), o.opt::<String>("unknown"));
        match o.finish(read)? {
            (Some(code), None) => Ok(AttemptOutcome::Failed(code)),
            (None, Some(why)) => Ok(AttemptOutcome::Unknown(why)),
            _ => Err(UNKNOWN_NAME),
        }
    }
}

impl ToJson for IntentRecord {
    fn write_json(&self, out: &mut JsonOut) {
        Stored(self, Form::Value).write_json(out)
    }
}

impl IntentRecord {
    /// The record as written at `revision`: in this build's schema (the
    /// body as text), whatever schema it was read in.
    pub(crate) fn set_revision(&mut self, revision: u64) {
        self.revision = revision;
        self.schema_version = SCHEMA_VERSION;
    }

    /// The record's text as stored: a record of schema 3 or later keeps
    /// its body as text; an older one is written back as it was read.
    #[cfg(test)]
    pub(crate) fn stored_text(&self, float: crate::protocol::FloatText) -> String {
        JsonOut::of(&Stored(self, self.stored_form(None)), float)
    }

    /// How its body is stored: as text from schema 3 on (`hole`: a body
    /// the host holds left out, its place kept there).
    fn stored_form<'a>(&self, hole: Option<&'a Cell<Option<usize>>>) -> Form<'a> {
        match hole {
            _ if self.schema_version < BODY_TEXT_SCHEMA_VERSION => Form::Value,
            Some(at) => Form::Hole(at),
            None => Form::Text,
        }
    }

    /// [`IntentRecord::stored_text`], a body the host holds left out (its
    /// place said): the record's writes never copy a large body out.
    pub(crate) fn stored_parts(&self, float: crate::protocol::FloatText) -> StoredText {
        let at = Cell::new(None);
        let text = JsonOut::of(&Stored(self, self.stored_form(Some(&at))), float);
        StoredText {
            text,
            hole: at.get().map(|at| (at, self.command.body.clone())),
        }
    }
}

impl ToJson for Stored<'_, IntentRecord> {
    fn write_json(&self, out: &mut JsonOut) {
        let Stored(r, form) = *self;
        ObjectWriter::new(out)
            .put("schemaVersion", &r.schema_version)
            .put("namespace", &r.namespace)
            .some("user", &r.user)
            .put("intentId", &r.intent_id)
            .some("intentKey", &r.intent_key)
            .put("requestId", &r.request_id)
            .put("aggregate", &r.aggregate)
            .put("command", &Stored(&r.command, form))
            .put("fingerprint", &r.fingerprint)
            .put("state", &r.state)
            .put("attempts", &r.attempts)
            .some("lastResult", &r.last_result.as_ref().map(Kept))
            .some("reason", &r.reason)
            .some("appended", &r.appended)
            .some("appendedVersion", &r.appended_version)
            .put("createdAt", &r.created_at)
            .put("updatedAt", &r.updated_at)
            .put("revision", &r.revision)
            .some("scope", &r.scope)
            .some("scopeSeq", &r.scope_seq)
            .some("waitsFor", &r.waits_for)
            .done()
    }
}

impl FromJson for IntentRecord {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        let mut o = ObjectReader::of(value)?;
        // Read in field order: the first bad field is the one named.
        let schema_version = o.req("schemaVersion");
        let namespace = o.req("namespace");
        let user = o.opt("user");
        let intent_id = o.req("intentId");
        let intent_key = o.opt("intentKey");
        let request_id = o.req("requestId");
        let aggregate = o.req("aggregate");
        let mut command: CommandSpec = o.req("command");
        if schema_version >= BODY_TEXT_SCHEMA_VERSION {
            command.body.stored();
        }
        let read = IntentRecord {
            schema_version,
            namespace,
            user,
            intent_id,
            intent_key,
            request_id,
            aggregate,
            command,
            fingerprint: o.req("fingerprint"),
            state: o.req("state"),
            attempts: o.or_default("attempts"),
            last_result: o.opt("lastResult"),
            reason: o.opt("reason"),
            appended: o.opt("appended"),
            appended_version: o.opt("appendedVersion"),
            created_at: o.req("createdAt"),
            updated_at: o.req("updatedAt"),
            revision: o.or_default("revision"),
            scope: o.opt("scope"),
            scope_seq: o.opt("scopeSeq"),
            waits_for: o.opt("waitsFor"),
        };
        o.finish(read)
    }
}

/// The most of the last answer a record keeps, as text; past it, its
/// message's first bytes and first binding errors, without its `result`.
const KEPT_ANSWER: usize = 65_536;

/// What a record keeps of the last answer: the whole of it, unless it is
/// larger than a record should hold (an answer is read up to
/// `maxAnswerBytes`; storage keeps every record of the journal): then its
/// identity and code, its message cut, its first binding errors, and `{}`
/// for its `result`. The caller's outcome has the answer whole.
struct Kept<'a>(&'a CommandResult);

impl ToJson for Kept<'_> {
    fn write_json(&self, out: &mut JsonOut) {
        let at = out.text.len();
        self.0.write_json(out);
        if out.text.len() - at > KEPT_ANSWER {
            out.text.truncate(at);
            let mut r = self.0.clone();
            let mut end = r.error_msg.len().min(KEPT_ANSWER / 16);
            while !r.error_msg.is_char_boundary(end) {
                end -= 1;
            }
            r.error_msg.truncate(end);
            r.binding_errors.truncate(64);
            r.result = JsonValue::empty_object();
            r.write_json(out);
        }
    }
}

/// Why a stored record could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordError {
    /// Written by a newer build: left untouched, never overwritten.
    FutureSchema(u32),
    /// Not a record at all, or a damaged one.
    Corrupt(String),
}

impl RecordError {
    /// The message (what `Display` writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        use crate::text::text;
        match self {
            RecordError::FutureSchema(v) => {
                text!("record schema ", v, " is newer than ", SCHEMA_VERSION)
            }
            // A reason kept beside a quarantined entry is a whole message already.
            RecordError::Corrupt(why) if why.starts_with("corrupt record: ") => why.clone(),
            RecordError::Corrupt(why) => text!("corrupt record: ", why),
        }
    }
}

impl ::core::fmt::Display for RecordError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(&self.message())
    }
}

/// Migration: checks a stored record's `schemaVersion` before its body is
/// decoded. Version 1 is the first schema; version 2 adds scopes and the
/// `queued` and `withdrawn` states, and reads as version 1 does (its
/// fields are optional); version 3 keeps the body as text (read by
/// [`IntentRecord`]'s reader); version 4 adds the user (optional too). A later one adds its upgrade step here, so old
/// records are upgraded when read, never dropped, and a record from a
/// newer build is left untouched rather than misread.
pub fn check_schema(version: Option<u64>) -> Result<(), RecordError> {
    match version {
        Some(v) if v >= u64::from(FIRST_SCHEMA_VERSION) && v < u64::from(SCHEMA_VERSION) => Ok(()),
        _ => check_schema_version(version, SCHEMA_VERSION),
    }
}

/// Accepts `version` when it is `current`; a newer one is
/// [`RecordError::FutureSchema`], anything else corrupt.
pub(crate) fn check_schema_version(version: Option<u64>, current: u32) -> Result<(), RecordError> {
    match version {
        Some(v) if v == u64::from(current) => Ok(()),
        Some(v) if v > u64::from(current) => Err(RecordError::FutureSchema(
            u32::try_from(v).unwrap_or(u32::MAX),
        )),
        Some(v) => Err(RecordError::Corrupt(crate::text::text!(
            "unknown schema version ",
            v
        ))),
        None => Err(RecordError::Corrupt("no schemaVersion".into())),
    }
}

/// Decodes a record from JSON text through the migration check, by the
/// reader the shipped modules use.
#[cfg(test)]
pub(crate) fn decode_json_text(text: &str) -> Result<IntentRecord, RecordError> {
    let value: JsonValue =
        serde_json::from_str(text).map_err(|e| RecordError::Corrupt(e.to_string()))?;
    let version = match value.get("schemaVersion") {
        Some(JsonValue::Int(v)) => u64::try_from(*v).ok(),
        _ => None,
    };
    check_schema(version)?;
    IntentRecord::from_json(value).map_err(|e| RecordError::Corrupt(e.message()))
}
