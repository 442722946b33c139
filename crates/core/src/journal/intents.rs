//! What the engine decides about intents, each a function of records: a
//! new intent's record (its requestId minted or derived from its key), a
//! key given again, a refusal before the bus sent again, a place in a
//! scope, a withdrawal, a re-decision after a conflict, what a full store
//! evicts and what retention prunes. The engine writes each with a
//! compare-and-swap before anything is sent.

use super::fingerprint::fingerprint_by;
use super::ids::{derived_request_id, random_id, RandomSource, RequestIdPolicy};
use super::record::{AggregateIdentity, CommandSpec, IntentRecord, IntentState, SCHEMA_VERSION};
use super::store::StoreError;
use crate::protocol::{FloatText, JsonValue};
use crate::text::text;

/// Seven days: how long settled intents are kept by default.
pub const DEFAULT_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// A new business intent, as the caller describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewIntent {
    /// The caller's business key (same key = same intent, same requestId).
    pub intent_key: Option<String>,
    /// The aggregate; `aggregate_id` may be empty for creates.
    pub aggregate: AggregateIdentity,
    /// The command.
    pub command: CommandSpec,
    /// The scope it is sent in, one after another with the scope's other
    /// intents; `None` for an intent sent on its own.
    pub scope: Option<String>,
}

/// What `begin` found or made.
#[derive(Clone, Debug, PartialEq)]
pub enum Begun {
    /// A new intent, persisted: it may now be sent.
    Created(IntentRecord),
    /// The same key's intent is still unresolved: drive that one, no second intent.
    Unresolved(IntentRecord),
    /// The same key's intent has settled: its outcome, without sending.
    Settled(IntentRecord),
}

impl Begun {
    /// The record, whichever case.
    pub fn record(&self) -> &IntentRecord {
        match self {
            Begun::Created(r) | Begun::Unresolved(r) | Begun::Settled(r) => r,
        }
    }
}

/// A journal failure.
#[derive(Clone, Debug, PartialEq)]
pub enum JournalError {
    /// Storage failed: nothing may be sent.
    Storage(StoreError),
    /// The intent key was used before with a different payload.
    IntentKeyReused {
        /// The key.
        intent_key: String,
        /// The requestId the key is bound to.
        request_id: String,
    },
    /// A command that does not create its aggregate must name it.
    MissingAggregateId,
    /// Only an intent in conflict can be re-decided by its caller.
    NotInConflict {
        /// Its state.
        state: IntentState,
    },
    /// Only an intent that has not begun an attempt can be withdrawn: one
    /// that has may be appended, which only history can tell.
    NotWithdrawable {
        /// Its record, unchanged.
        record: Box<IntentRecord>,
    },
    /// The record found is another user's (`connect({ user })`): nothing
    /// of it is sent, shown or changed here.
    OfAnotherUser,
}

impl From<StoreError> for JournalError {
    fn from(e: StoreError) -> Self {
        JournalError::Storage(e)
    }
}

impl JournalError {
    /// The message (what `Display` writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        match self {
            JournalError::Storage(e) => e.message(),
            JournalError::IntentKeyReused {
                intent_key,
                request_id,
            } => text!(
                "intent key `",
                intent_key,
                "` (requestId ",
                request_id,
                ") was used with a different payload"
            ),
            JournalError::MissingAggregateId => {
                "the command does not create its aggregate, so it needs an aggregate id".into()
            }
            JournalError::NotInConflict { state } => text!(
                "the intent is ",
                state.as_str(),
                ", not in conflict: nothing to re-decide"
            ),
            JournalError::NotWithdrawable { record } => withdrawal_refused(record),
            JournalError::OfAnotherUser => {
                "this key's intent was made by another user of this device; nothing was sent".into()
            }
        }
    }
}

/// Why `record` cannot be withdrawn (`JournalError::NotWithdrawable`).
pub(crate) fn withdrawal_refused(record: &IntentRecord) -> String {
    let state = record.state.as_str();
    match record.attempts.len() {
        0 => text!(
            "the intent is ",
            state,
            ": only an intent not yet sent can be withdrawn; nothing changed"
        ),
        n => text!(
            "the intent is ",
            state,
            " and has begun ",
            n,
            " attempt(s): it may be appended, which only history can tell, so it cannot be withdrawn; nothing changed"
        ),
    }
}

impl ::core::fmt::Display for JournalError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(&self.message())
    }
}

/// The payload an intent key is bound to: what the caller said, not what
/// was generated for it.
fn payload_fingerprint(
    aggregate: &AggregateIdentity,
    command: &CommandSpec,
    float: FloatText,
) -> String {
    let s = |v: &str| JsonValue::String(v.to_owned());
    let o = |v: &Option<String>| v.as_deref().map_or(JsonValue::Null, s);
    let identity = JsonValue::Array(vec![
        o(&aggregate.context_alias),
        s(&aggregate.resource),
        o(&aggregate.tenant_id),
        o(&aggregate.owner_id),
        s(&aggregate.aggregate_id),
        s(&command.method),
        s(&command.path),
        command
            .expected_version
            .map_or(JsonValue::Null, JsonValue::Int),
    ]);
    let body = &command.body;
    let float = |f: f64, out: &mut String| match body.float_text(f) {
        Some(text) => out.push_str(text),
        None => float(f, out),
    };
    fingerprint_by(&[&identity, body.value()], &float, body.text_len())
}

/// What a new intent becomes before anything is stored: its record
/// (`pending`, revision 0, with its requestId minted or derived from its
/// key) and the fingerprint its key is bound to. A create without an
/// aggregate id gets one here, derived from the key when there is one (so
/// it survives the loss of local storage too); a replayed key keeps the
/// stored record instead.
pub fn new_record(
    namespace: &str,
    policy: RequestIdPolicy,
    float: FloatText,
    now_ms: i64,
    intent: NewIntent,
    random: &mut dyn RandomSource,
) -> Result<(IntentRecord, String), JournalError> {
    let NewIntent {
        intent_key,
        mut aggregate,
        command,
        scope,
    } = intent;
    let fingerprint = payload_fingerprint(&aggregate, &command, float);
    let request_id = match &intent_key {
        Some(key) => derived_request_id(namespace, key),
        None => random_id(policy, now_ms.max(0) as u64, random),
    };
    if aggregate.aggregate_id.is_empty() && command.create {
        aggregate.aggregate_id = match &intent_key {
            Some(key) => derived_request_id(namespace, &text!(key, "\u{0}aggregate")),
            None => random_id(RequestIdPolicy::RandomV7, now_ms.max(0) as u64, random),
        };
    }
    let record = IntentRecord {
        schema_version: SCHEMA_VERSION,
        namespace: namespace.to_owned(),
        user: None,
        intent_id: request_id.clone(),
        intent_key,
        request_id,
        aggregate,
        command,
        fingerprint: fingerprint.clone(),
        state: IntentState::Pending,
        attempts: Vec::new(),
        last_result: None,
        reason: None,
        appended: None,
        appended_version: None,
        created_at: now_ms,
        updated_at: now_ms,
        revision: 0,
        scope,
        scope_seq: None,
        waits_for: None,
    };
    Ok((record, fingerprint))
}

impl AggregateIdentity {
    /// A command that does not create its aggregate must name it.
    pub(crate) fn check_id(&self, create: bool) -> Result<(), JournalError> {
        if self.aggregate_id.is_empty() && !create {
            return Err(JournalError::MissingAggregateId);
        }
        Ok(())
    }
}

/// The stored intent of a key given again: its outcome when settled, the
/// intent to drive when not; a different payload under the same key is
/// refused.
pub fn replay(key: &str, existing: IntentRecord, fingerprint: &str) -> Result<Begun, JournalError> {
    if existing.fingerprint != fingerprint {
        return Err(JournalError::IntentKeyReused {
            intent_key: key.to_owned(),
            request_id: existing.request_id,
        });
    }
    Ok(if existing.state.is_settled() {
        Begun::Settled(existing)
    } else {
        Begun::Unresolved(existing)
    })
}

/// Only an outcome the server began executing is replayed. A keyed intent
/// refused before the command bus (a proxy's 401 or 403, a gateway
/// validation error at SENT, a request that never left) proves nothing was
/// done, so the same key sends again, with the same requestId: the record
/// goes back to `pending` (its place taken again in `scope`). A withdrawn
/// intent is sent again the same way (nothing of it was sent).
pub(crate) fn sent_again(mut record: IntentRecord, scope: Option<String>) -> IntentRecord {
    record.reason = Some(if record.state == IntentState::Withdrawn {
        "sent again: it was withdrawn before it was sent".into()
    } else {
        "sent again: the earlier refusal came before the command bus".into()
    });
    record.state = IntentState::Pending;
    record.appended = None;
    record.scope = scope;
    record.scope_seq = None;
    record
}

/// Gives a scoped record its place among its scope's `records`: after every
/// one of them, `queued` while any is unsettled, else `pending`. It names
/// the last unsettled one in `waits_for`: its turn comes when that one
/// settles (it cannot settle before those ahead of it, unless it is
/// withdrawn), so the name stays true without another write. Nothing for an
/// unscoped record.
pub(crate) fn take_place(record: &mut IntentRecord, records: &[IntentRecord]) {
    let Some(scope) = record.scope.clone() else {
        return;
    };
    record.scope_seq = Some(super::scope::next_seq(records, &scope));
    record.waits_for = super::scope::last(records, &scope).map(|r| r.intent_id.clone());
    record.state = match record.waits_for {
        Some(_) => IntentState::Queued,
        None => IntentState::Pending,
    };
}

/// The withdrawal of `record` (not withdrawn yet), to be written by
/// compare-and-swap against the write that would begin its first attempt;
/// refused for an intent that has begun an attempt (it may be appended,
/// which only history can tell).
pub(crate) fn withdrawal(mut record: IntentRecord) -> Result<IntentRecord, JournalError> {
    let not_sent = record.attempts.is_empty()
        && matches!(record.state, IntentState::Queued | IntentState::Pending);
    if !not_sent {
        return Err(JournalError::NotWithdrawable {
            record: Box::new(record),
        });
    }
    record.state = IntentState::Withdrawn;
    record.appended = Some(false);
    record.waits_for = None;
    record.reason = Some("withdrawn by the caller before it was sent".into());
    Ok(record)
}

/// The caller re-decided an intent that met a version conflict: the same
/// intent, with the same requestId, goes out again expecting
/// `expected_version` (DESIGN rule 6: never bumped without the caller).
/// One no longer in conflict is left as it is.
pub(crate) fn redecide(
    record: &mut IntentRecord,
    expected_version: Option<i64>,
) -> Result<(), JournalError> {
    if record.state != IntentState::Conflict {
        return Err(JournalError::NotInConflict {
            state: record.state,
        });
    }
    record.command.expected_version = expected_version;
    record.state = IntentState::Pending;
    record.reason = Some("re-decided by the caller after a conflict".into());
    record.appended = None;
    Ok(())
}

/// The settled records a full store may lose to make room for `writing`, in
/// the order they go: `succeeded`, `rejected` and `withdrawn` ones (their
/// outcome was reported), keyless before keyed, oldest first (`records` is
/// in creation order). Unresolved, escalated and conflicted ones never.
pub(crate) fn evictable<'a>(records: &'a [IntentRecord], writing: &str) -> Vec<&'a str> {
    let settled = |keyed: bool| {
        records.iter().filter(move |r| {
            matches!(
                r.state,
                IntentState::Succeeded | IntentState::Rejected | IntentState::Withdrawn
            ) && r.intent_key.is_some() == keyed
                && r.intent_id != writing
        })
    };
    settled(false)
        .chain(settled(true))
        .map(|r| r.intent_id.as_str())
        .collect()
}

/// The settled records older than the retention window (unknown and
/// escalated ones never).
pub(crate) fn prunable(records: &[IntentRecord], now_ms: i64, retention_ms: i64) -> Vec<&str> {
    records
        .iter()
        .filter(|r| r.is_prunable(now_ms, retention_ms))
        .map(|r| r.intent_id.as_str())
        .collect()
}

impl IntentRecord {
    /// Whether `prune()` removes it at `now_ms`: settled and reported, and
    /// last changed longer ago than `retention_ms`.
    pub(crate) fn is_prunable(&self, now_ms: i64, retention_ms: i64) -> bool {
        self.state.is_prunable() && now_ms.saturating_sub(self.updated_at) > retention_ms
    }
}
