//! The journal: begins intents (minting or deriving their requestId and
//! persisting it before anything is sent), saves their progress with
//! compare-and-swap, lists, prunes and clears them.

use super::fingerprint::fingerprint_by;
use super::ids::{derived_request_id, random_id, RandomSource, RequestIdPolicy};
use super::record::{AggregateIdentity, CommandSpec, IntentRecord, IntentState, SCHEMA_VERSION};
use super::store::{IntentStore, Listing, StoreError, Unavailable};
use crate::protocol::{float_text, FloatText, JsonValue};
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

/// Intents of one namespace over one store.
#[derive(Debug)]
pub struct Journal<S> {
    store: S,
    namespace: String,
    policy: RequestIdPolicy,
    retention_ms: i64,
    float_text: FloatText,
}

impl<S: IntentStore> Journal<S> {
    /// A journal for `namespace` (keep users and tenants apart).
    pub fn new(store: S, namespace: &str) -> Journal<S> {
        Journal {
            store,
            namespace: namespace.to_owned(),
            policy: RequestIdPolicy::default(),
            retention_ms: DEFAULT_RETENTION_MS,
            float_text,
        }
    }

    /// Uses `policy` for random requestIds.
    #[cfg(test)]
    pub(crate) fn with_policy(mut self, policy: RequestIdPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Keeps settled intents for `ms`.
    #[cfg(test)]
    pub(crate) fn with_retention(mut self, ms: i64) -> Self {
        self.retention_ms = ms;
        self
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Gives the store back (e.g. to open another namespace over it).
    #[cfg(test)]
    pub(crate) fn into_store(self) -> S {
        self.store
    }

    /// Begins an intent. A new one is written to storage *before* this
    /// returns, so its requestId is durable before the first byte is sent;
    /// if storage fails, this fails and nothing may be sent.
    pub async fn begin(
        &self,
        now_ms: i64,
        intent: NewIntent,
        random: &mut dyn RandomSource,
    ) -> Result<Begun, JournalError> {
        self.begin_with(now_ms, intent, random, true).await
    }

    /// Begins an intent that is about to be driven: a keyless one is not
    /// written here but by the machine's first `Persist` (revision 0, a
    /// compare-and-swap create), which still comes before the first send —
    /// one storage write fewer per command. Nobody else can know a random
    /// requestId before then, so nothing is lost by waiting; a keyed intent
    /// is written at once, because two tabs may begin the same key, and so
    /// is a scoped one, whose place in its scope is its first write.
    ///
    /// A scoped intent takes the place after every record of its scope,
    /// `queued` while any of them is unsettled, `pending` when none is: the
    /// caller holds the scope's lock around this call, so two tabs never
    /// take the same place.
    pub async fn begin_for_drive(
        &self,
        now_ms: i64,
        intent: NewIntent,
        random: &mut dyn RandomSource,
    ) -> Result<Begun, JournalError> {
        let write_now = intent.intent_key.is_some() || intent.scope.is_some();
        self.begin_with(now_ms, intent, random, write_now).await
    }

    async fn begin_with(
        &self,
        now_ms: i64,
        intent: NewIntent,
        random: &mut dyn RandomSource,
        write_now: bool,
    ) -> Result<Begun, JournalError> {
        let scope = intent.scope.clone();
        let key = intent.intent_key.clone();
        let (mut record, fingerprint) = new_record(
            &self.namespace,
            self.policy,
            self.float_text,
            now_ms,
            intent,
            random,
        )?;
        if let Some(key) = &key {
            if let Some(existing) = self.store.get(&self.namespace, &record.request_id).await? {
                let begun = replay(key, existing, &fingerprint)?;
                return self
                    .resend_if_refused_before_the_bus(now_ms, begun, scope)
                    .await;
            }
        }
        record.aggregate.check_id(record.command.create)?;
        self.take_place(&mut record).await?;
        if !write_now {
            return Ok(Begun::Created(record));
        }
        match self.put(&record).await {
            Ok(revision) => {
                record.set_revision(revision);
                Ok(Begun::Created(record))
            }
            // Another tab began the same key at the same moment: theirs wins.
            Err(StoreError::Conflict { .. }) => {
                let key = key.unwrap_or_default();
                match self.store.get(&self.namespace, &record.intent_id).await? {
                    Some(existing) => replay(&key, existing, &fingerprint),
                    None => Err(JournalError::Storage(StoreError::Conflict {
                        current: None,
                    })),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Only an outcome the server began executing is replayed. A keyed
    /// intent refused before the command bus (a proxy's 401 or 403, a
    /// gateway validation error at SENT, a request that never left) proves
    /// nothing was done, so the same key sends again, with the same
    /// requestId: the record goes back to `pending`.
    ///
    /// A withdrawn intent is sent again the same way (nothing of it was
    /// sent), taking a new place at the end of `scope`.
    async fn resend_if_refused_before_the_bus(
        &self,
        now_ms: i64,
        begun: Begun,
        scope: Option<String>,
    ) -> Result<Begun, JournalError> {
        match begun {
            Begun::Settled(record) if record.refused_before_the_bus() => {
                let mut record = sent_again(record, scope);
                self.take_place(&mut record).await?;
                match self.save(&mut record, now_ms).await {
                    Ok(()) => Ok(Begun::Unresolved(record)),
                    // Another tab re-sent it first: theirs is the intent now.
                    Err(JournalError::Storage(StoreError::Conflict { .. })) => {
                        match self.store.get(&self.namespace, &record.intent_id).await? {
                            Some(now) if now.state.is_settled() => Ok(Begun::Settled(now)),
                            Some(now) => Ok(Begun::Unresolved(now)),
                            None => Ok(Begun::Unresolved(record)),
                        }
                    }
                    Err(e) => Err(e),
                }
            }
            other => Ok(other),
        }
    }

    /// Gives a scoped record its place ([`take_place`]), reading its scope.
    async fn take_place(&self, record: &mut IntentRecord) -> Result<(), JournalError> {
        let Some(scope) = record.scope.clone() else {
            return Ok(());
        };
        let records = self.in_scope(&scope).await?;
        take_place(record, &records);
        Ok(())
    }

    /// The earlier intent of `record`'s scope whose turn it is, and the id
    /// of the unsettled one just before `record` (the one a waiting record
    /// listens for), read from the journal now; `None` when `record`'s own
    /// turn has come (or it has no scope). The one question a driver asks
    /// before a queued intent's first attempt.
    pub async fn ahead_of(
        &self,
        record: &IntentRecord,
    ) -> Result<Option<(IntentRecord, String)>, JournalError> {
        let Some(scope) = &record.scope else {
            return Ok(None);
        };
        let records = self.in_scope(scope).await?;
        Ok(super::scope::ahead_of(&records, record).map(|head| {
            let before = super::scope::just_before(&records, record).unwrap_or(head);
            (head.clone(), before.intent_id.clone())
        }))
    }

    /// Every record of `scope`, in no particular order (see [`super::scope`]).
    pub async fn in_scope(&self, scope: &str) -> Result<Vec<IntentRecord>, JournalError> {
        let listing = self
            .store
            .list_where(&self.namespace, ("scope", scope))
            .await?;
        let mut records = listing.records;
        records.retain(|r| r.scope.as_deref() == Some(scope));
        Ok(records)
    }

    /// Withdraws an intent that has not begun an attempt (queued, or pending
    /// and never sent): it is settled `withdrawn`, nothing of it is ever
    /// sent, and its scope's next intent may go. The write is a
    /// compare-and-swap against the one that would begin its first attempt,
    /// so exactly one of them happens. `Ok(None)`: no such intent. A
    /// withdrawn intent is withdrawn again without a write.
    pub async fn withdraw(
        &self,
        now_ms: i64,
        id_or_key: &str,
    ) -> Result<Option<IntentRecord>, JournalError> {
        Ok(self.withdraw_once(now_ms, id_or_key).await?.map(|(r, _)| r))
    }

    /// [`Journal::withdraw`], and whether this call wrote the withdrawal.
    async fn withdraw_once(
        &self,
        now_ms: i64,
        id_or_key: &str,
    ) -> Result<Option<(IntentRecord, bool)>, JournalError> {
        loop {
            let Some(record) = self.find(id_or_key).await? else {
                return Ok(None);
            };
            if record.state == IntentState::Withdrawn {
                return Ok(Some((record, false)));
            }
            let mut record = withdrawal(record)?;
            match self.save(&mut record, now_ms).await {
                // Changed meanwhile (its first attempt begun, or withdrawn by
                // another tab): decide again on what is stored now.
                Err(JournalError::Storage(StoreError::Conflict { .. })) => continue,
                other => return other.map(|()| Some((record, true))),
            }
        }
    }

    /// Withdraws every queued intent of `scope`: the records this call
    /// withdrew. The head of the scope, pending or on the wire, is left as
    /// it is.
    pub async fn withdraw_scope(
        &self,
        now_ms: i64,
        scope: &str,
    ) -> Result<Vec<IntentRecord>, JournalError> {
        let mut withdrawn = Vec::new();
        for record in self.in_scope(scope).await? {
            if record.state != IntentState::Queued {
                continue;
            }
            match self.withdraw_once(now_ms, &record.intent_id).await {
                Ok(Some((r, true))) => withdrawn.push(r),
                Ok(_) | Err(JournalError::NotWithdrawable { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(withdrawn)
    }

    /// Saves a changed record (compare-and-swap on its revision). On
    /// success the record carries its new revision.
    pub async fn save(&self, record: &mut IntentRecord, now_ms: i64) -> Result<(), JournalError> {
        let previous = record.updated_at;
        record.updated_at = now_ms;
        match self.put(record).await {
            Ok(revision) => {
                record.set_revision(revision);
                Ok(())
            }
            Err(e) => {
                record.updated_at = previous;
                Err(e.into())
            }
        }
    }

    /// Writes `record` (compare-and-swap on its revision) and returns its new
    /// revision; when the store is full, first makes room by evicting settled
    /// intents the journal no longer needs, and writes again. Every write of
    /// an intent goes through here: [`Journal::begin`], [`Journal::save`] and
    /// the driver's `Persist` actions alike.
    ///
    /// Refusing to send because storage is full is right; refusing because
    /// the journal filled it with its own history is not. Only `succeeded`,
    /// `rejected` and `withdrawn` intents are evicted (their outcome was reported; a
    /// conflict still waits for the caller's decision), keyless ones before
    /// keyed ones (a keyed intent's requestId is derived from its key, so the
    /// gateway still recognises a repeat), oldest created first, in doubling batches
    /// until the write fits. Unresolved and escalated intents are never
    /// evicted; if nothing can go, the original error stands.
    pub async fn put(&self, record: &IntentRecord) -> Result<u64, StoreError> {
        let full = match self.store.put(record).await {
            Err(
                e @ StoreError::Unavailable {
                    kind: Unavailable::QuotaExceeded,
                    ..
                },
            ) => e,
            other => return other,
        };
        // Oldest first (the listing is in creation order), keyless first.
        let Ok(listing) = self.list().await else {
            return Err(full);
        };
        let evictable = evictable(&listing.records, &record.intent_id);
        let mut evicted = 0;
        let mut batch = 1;
        while evicted < evictable.len() {
            let upto = (evicted + batch).min(evictable.len());
            let ids: Vec<&str> = evictable[evicted..upto].to_vec();
            if self.store.delete_many(&self.namespace, &ids).await.is_err() {
                return Err(full);
            }
            evicted = upto;
            match self.store.put(record).await {
                Err(StoreError::Unavailable {
                    kind: Unavailable::QuotaExceeded,
                    ..
                }) => batch *= 2,
                other => return other,
            }
        }
        Err(full)
    }

    /// The caller re-decided an intent that met a version conflict: the same
    /// intent, with the same requestId, goes out again expecting
    /// `expected_version` (DESIGN rule 6: never bumped without the caller).
    /// The business key stays bound to the payload it was first given with.
    #[cfg(test)]
    pub(crate) async fn redecide(
        &self,
        now_ms: i64,
        intent_id: &str,
        expected_version: Option<i64>,
    ) -> Result<IntentRecord, JournalError> {
        let record =
            self.find(intent_id)
                .await?
                .ok_or(JournalError::Storage(StoreError::Conflict {
                    current: None,
                }))?;
        let mut record = redecided(record, expected_version)?;
        self.save(&mut record, now_ms).await?;
        Ok(record)
    }

    /// One intent by id (its requestId) or by business key.
    pub async fn find(&self, id_or_key: &str) -> Result<Option<IntentRecord>, JournalError> {
        if let Some(r) = self.store.get(&self.namespace, id_or_key).await? {
            return Ok(Some(r));
        }
        let derived = derived_request_id(&self.namespace, id_or_key);
        Ok(self.store.get(&self.namespace, &derived).await?)
    }

    /// Every intent, oldest first, with what had to be quarantined.
    pub async fn list(&self) -> Result<Listing, JournalError> {
        let mut listing = self.store.list(&self.namespace).await?;
        let order = crate::order::ascending(
            listing
                .records
                .iter()
                // i64 to u64 keeping the order (the sign bit flipped).
                .map(|r| ((r.created_at as u64) ^ (1 << 63), r.intent_id.as_str()))
                .collect(),
        );
        let mut slots: Vec<Option<IntentRecord>> = std::mem::take(&mut listing.records)
            .into_iter()
            .map(Some)
            .collect();
        listing.records = order.into_iter().filter_map(|i| slots[i].take()).collect();
        Ok(listing)
    }

    /// What `resume()` drives, oldest first: the unresolved intents, and the
    /// escalated ones, whose history is asked again (a read, so always safe).
    pub async fn unresolved(&self) -> Result<Vec<IntentRecord>, JournalError> {
        let mut records = self.list().await?.records;
        records.retain(|r| r.state.is_resumable());
        Ok(records)
    }

    /// Deletes settled intents older than the retention window. Unknown and
    /// escalated intents are never pruned. Returns how many were removed.
    pub async fn prune(&self, now_ms: i64) -> Result<usize, JournalError> {
        let records = self.store.list(&self.namespace).await?.records;
        let old = prunable(&records, now_ms, self.retention_ms);
        self.store.delete_many(&self.namespace, &old).await?;
        Ok(old.len())
    }

    /// Deletes every intent of the namespace (sign-out). Returns how many.
    pub async fn clear(&self) -> Result<usize, JournalError> {
        let records = self.store.list(&self.namespace).await?.records;
        let ids: Vec<&str> = records.iter().map(|r| r.intent_id.as_str()).collect();
        self.store.delete_many(&self.namespace, &ids).await?;
        Ok(ids.len())
    }
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
pub(crate) fn redecided(
    mut record: IntentRecord,
    expected_version: Option<i64>,
) -> Result<IntentRecord, JournalError> {
    if record.state != IntentState::Conflict {
        return Err(JournalError::NotInConflict {
            state: record.state,
        });
    }
    record.command.expected_version = expected_version;
    record.state = IntentState::Pending;
    record.reason = Some("re-decided by the caller after a conflict".into());
    record.appended = None;
    Ok(record)
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
