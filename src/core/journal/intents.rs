//! The journal: begins intents (minting or deriving their requestId and
//! persisting it before anything is sent), saves their progress with
//! compare-and-swap, lists, prunes and clears them.

use super::fingerprint::fingerprint;
use super::ids::{derived_request_id, random_id, RandomSource, RequestIdPolicy};
use super::record::{AggregateIdentity, CommandSpec, IntentRecord, IntentState, SCHEMA_VERSION};
use super::store::{IntentStore, Listing, StoreError, Unavailable};
use crate::core::protocol::{float_text, FloatText, JsonValue};
use crate::core::text::text;

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
#[derive(Clone, Debug, PartialEq, Eq)]
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
        }
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
    fingerprint(&[&identity, command.body.value()], float)
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
        Journal::with_float_text(store, namespace, float_text)
    }

    /// A journal whose fingerprints write non-integral numbers with
    /// `float`, which must write what [`float_text`] writes: a module that
    /// takes the digits from its engine (`float_text_from_exponential`)
    /// calls this instead of [`Journal::new`], and carries no float printing.
    pub fn with_float_text(store: S, namespace: &str, float: FloatText) -> Journal<S> {
        Journal {
            store,
            namespace: namespace.to_owned(),
            policy: RequestIdPolicy::default(),
            retention_ms: DEFAULT_RETENTION_MS,
            float_text: float,
        }
    }

    /// Uses `policy` for random requestIds.
    pub fn with_policy(mut self, policy: RequestIdPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Keeps settled intents for `ms`.
    pub fn with_retention(mut self, ms: i64) -> Self {
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
    pub fn into_store(self) -> S {
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
    /// is written at once, because two tabs may begin the same key.
    pub async fn begin_for_drive(
        &self,
        now_ms: i64,
        intent: NewIntent,
        random: &mut dyn RandomSource,
    ) -> Result<Begun, JournalError> {
        let write_now = intent.intent_key.is_some();
        self.begin_with(now_ms, intent, random, write_now).await
    }

    async fn begin_with(
        &self,
        now_ms: i64,
        intent: NewIntent,
        random: &mut dyn RandomSource,
        write_now: bool,
    ) -> Result<Begun, JournalError> {
        let NewIntent {
            intent_key,
            mut aggregate,
            command,
        } = intent;
        let fingerprint = payload_fingerprint(&aggregate, &command, self.float_text);
        let request_id = match &intent_key {
            Some(key) => derived_request_id(&self.namespace, key),
            None => random_id(self.policy, now_ms.max(0) as u64, random),
        };
        if let Some(key) = &intent_key {
            if let Some(existing) = self.store.get(&self.namespace, &request_id).await? {
                let begun = self.replay(key, existing, &fingerprint)?;
                return self.resend_if_refused_before_the_bus(now_ms, begun).await;
            }
        }
        if aggregate.aggregate_id.is_empty() {
            if !command.create {
                return Err(JournalError::MissingAggregateId);
            }
            // A client-side id, so the create's outcome can always be
            // confirmed; derived from the key when there is one, so it
            // survives the loss of local storage too.
            aggregate.aggregate_id = match &intent_key {
                Some(key) => derived_request_id(&self.namespace, &text!(key, "\u{0}aggregate")),
                None => random_id(RequestIdPolicy::RandomV7, now_ms.max(0) as u64, random),
            };
        }
        let mut record = IntentRecord {
            schema_version: SCHEMA_VERSION,
            namespace: self.namespace.clone(),
            intent_id: request_id.clone(),
            intent_key: intent_key.clone(),
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
        };
        if !write_now {
            return Ok(Begun::Created(record));
        }
        match self.put(&record).await {
            Ok(revision) => {
                record.revision = revision;
                Ok(Begun::Created(record))
            }
            // Another tab began the same key at the same moment: theirs wins.
            Err(StoreError::Conflict { .. }) => {
                let key = intent_key.unwrap_or_default();
                match self.store.get(&self.namespace, &record.intent_id).await? {
                    Some(existing) => self.replay(&key, existing, &fingerprint),
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
    async fn resend_if_refused_before_the_bus(
        &self,
        now_ms: i64,
        begun: Begun,
    ) -> Result<Begun, JournalError> {
        match begun {
            Begun::Settled(mut record) if record.refused_before_the_bus() => {
                record.state = IntentState::Pending;
                record.appended = None;
                record.reason =
                    Some("sent again: the earlier refusal came before the command bus".into());
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

    fn replay(
        &self,
        key: &str,
        existing: IntentRecord,
        fingerprint: &str,
    ) -> Result<Begun, JournalError> {
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

    /// Saves a changed record (compare-and-swap on its revision). On
    /// success the record carries its new revision.
    pub async fn save(&self, record: &mut IntentRecord, now_ms: i64) -> Result<(), JournalError> {
        let previous = record.updated_at;
        record.updated_at = now_ms;
        match self.put(record).await {
            Ok(revision) => {
                record.revision = revision;
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
    /// the journal filled it with its own history is not. Only `succeeded`
    /// and `rejected` intents are evicted (their outcome was reported; a
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
        let settled = |keyed: bool| {
            listing.records.iter().filter(move |r| {
                matches!(r.state, IntentState::Succeeded | IntentState::Rejected)
                    && r.intent_key.is_some() == keyed
                    && r.intent_id != record.intent_id
            })
        };
        let evictable: Vec<&IntentRecord> = settled(false).chain(settled(true)).collect();
        let mut evicted = 0;
        let mut batch = 1;
        while evicted < evictable.len() {
            let upto = (evicted + batch).min(evictable.len());
            let ids: Vec<&str> = evictable[evicted..upto]
                .iter()
                .map(|r| r.intent_id.as_str())
                .collect();
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
    pub async fn redecide(
        &self,
        now_ms: i64,
        intent_id: &str,
        expected_version: Option<i64>,
    ) -> Result<IntentRecord, JournalError> {
        let mut record =
            self.find(intent_id)
                .await?
                .ok_or(JournalError::Storage(StoreError::Conflict {
                    current: None,
                }))?;
        if record.state != IntentState::Conflict {
            return Err(JournalError::NotInConflict {
                state: record.state,
            });
        }
        record.command.expected_version = expected_version;
        record.state = IntentState::Pending;
        record.reason = Some("re-decided by the caller after a conflict".into());
        record.appended = None;
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
        let order = crate::core::order::ascending(
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
        let old: Vec<&str> = records
            .iter()
            .filter(|r| {
                r.state.is_prunable() && now_ms.saturating_sub(r.updated_at) > self.retention_ms
            })
            .map(|r| r.intent_id.as_str())
            .collect();
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
