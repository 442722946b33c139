//! The consumer protocol (effect records and their transitions) over a [`RecordStore`] of [`EffectRecord`]s.

use super::record::{check_identity, EffectRecord, EffectState, EFFECT_SCHEMA_VERSION};
use crate::journal::RecordStore;
use crate::journal::{Listing, StoreError};
use crate::protocol::JsonValue;

/// How long a started effect's deliverer counts as alive where no lock
/// tells (edge runtimes, Node): 30 s.
pub const DEFAULT_LEASE_MS: u64 = 30_000;

/// How many times a lost compare-and-swap is re-read before giving up.
const MAX_RACES: usize = 4;

/// What to do with one delivery of an identity.
#[derive(Clone, Debug, PartialEq)]
pub enum Delivery {
    /// Run the effect now: the `started` record is written (this deliverer's).
    Run(EffectRecord),
    /// Already done: skip, the record carries the result.
    Skip(EffectRecord),
    /// Started and never recorded done by a deliverer that is gone: ask the
    /// external system, then answer with [`Consumer::reconciled`].
    Reconcile(EffectRecord),
    /// A live deliverer is running it: deliver again after `until`.
    Busy {
        /// The end of its lease (ms since the epoch).
        until: u64,
        /// Its record.
        record: EffectRecord,
    },
}

/// The answer of a reconciliation.
#[derive(Clone, Debug, PartialEq)]
pub enum Reconciliation {
    /// The effect did happen: record it done, with this result.
    Done(Option<JsonValue>),
    /// The effect did not happen (or was compensated): run it again.
    Run,
}

/// Why a delivery could not be handled.
#[derive(Clone, Debug, PartialEq)]
pub enum ConsumerError {
    /// The identity cannot be used.
    InvalidIdentity(String),
    /// Storage failed: nothing was run (before) or `done` is not recorded (after).
    Storage(StoreError),
    /// Another deliverer moved the record on in between (its lease was taken over).
    Superseded {
        /// The record as found.
        current: Option<Box<EffectRecord>>,
    },
}

impl ConsumerError {
    /// The message (what `Display` writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        match self {
            ConsumerError::InvalidIdentity(why) => why.clone(),
            ConsumerError::Storage(e) => e.message(),
            ConsumerError::Superseded { .. } => "another deliverer took this identity over".into(),
        }
    }
}

impl ::core::fmt::Display for ConsumerError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(&self.message())
    }
}

impl From<StoreError> for ConsumerError {
    fn from(e: StoreError) -> Self {
        ConsumerError::Storage(e)
    }
}

/// An idempotent consumer: one namespace of effect records.
#[derive(Debug)]
pub struct Consumer<S> {
    store: S,
    namespace: String,
    lease_ms: u64,
}

impl<S: RecordStore<EffectRecord>> Consumer<S> {
    /// A consumer over `store`, in `namespace`.
    pub fn new(store: S, namespace: impl Into<String>, lease_ms: u64) -> Consumer<S> {
        Consumer {
            store,
            namespace: namespace.into(),
            lease_ms,
        }
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The lease of a started effect, in ms.
    pub fn lease_ms(&self) -> u64 {
        self.lease_ms
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Decides one delivery of `identity` by `owner` at `now`. `exclusive`
    /// says the caller holds the identity's lock (Web Locks), so a `started`
    /// record's deliverer is known to be gone whatever its lease says.
    pub async fn deliver(
        &self,
        identity: &str,
        now: u64,
        owner: &str,
        exclusive: bool,
    ) -> Result<Delivery, ConsumerError> {
        check_identity(identity).map_err(ConsumerError::InvalidIdentity)?;
        for _ in 0..MAX_RACES {
            let Some(found) = self.store.get(&self.namespace, identity).await? else {
                let fresh = EffectRecord {
                    schema_version: EFFECT_SCHEMA_VERSION,
                    namespace: self.namespace.clone(),
                    identity: identity.to_owned(),
                    state: EffectState::Started,
                    attempt: 1,
                    owner: owner.to_owned(),
                    started_at: now,
                    lease_until: now.saturating_add(self.lease_ms),
                    finished_at: None,
                    result: None,
                    reconciled: false,
                    last_error: None,
                    revision: 0,
                };
                match self.write(fresh).await {
                    Ok(started) => return Ok(Delivery::Run(started)),
                    Err(ConsumerError::Superseded { .. }) => continue,
                    Err(e) => return Err(e),
                }
            };
            return Ok(match found.state {
                EffectState::Done => Delivery::Skip(found),
                EffectState::Started if exclusive || now >= found.lease_until => {
                    Delivery::Reconcile(found)
                }
                EffectState::Started => Delivery::Busy {
                    until: found.lease_until,
                    record: found,
                },
            });
        }
        Err(ConsumerError::Superseded { current: None })
    }

    /// Records the effect of a [`Delivery::Run`] done, with its result.
    pub async fn complete(
        &self,
        started: &EffectRecord,
        now: u64,
        result: Option<JsonValue>,
    ) -> Result<EffectRecord, ConsumerError> {
        let mut done = started.clone();
        done.state = EffectState::Done;
        done.finished_at = Some(now);
        done.result = result;
        done.last_error = None;
        self.write(done).await
    }

    /// Records that the effect threw: the record stays `started` with the
    /// error and its lease ends now, so the next delivery reconciles at once.
    pub async fn fail(
        &self,
        started: &EffectRecord,
        now: u64,
        error: &str,
    ) -> Result<EffectRecord, ConsumerError> {
        let mut failed = started.clone();
        failed.last_error = Some(error.to_owned());
        failed.lease_until = now;
        self.write(failed).await
    }

    /// Applies a reconciliation of a [`Delivery::Reconcile`]: records it
    /// done ([`Delivery::Skip`]) or starts the next attempt ([`Delivery::Run`]).
    pub async fn reconciled(
        &self,
        record: &EffectRecord,
        now: u64,
        owner: &str,
        answer: Reconciliation,
    ) -> Result<Delivery, ConsumerError> {
        let mut next = record.clone();
        match answer {
            Reconciliation::Done(result) => {
                next.state = EffectState::Done;
                next.finished_at = Some(now);
                next.result = result;
                next.reconciled = true;
                self.write(next).await.map(Delivery::Skip)
            }
            Reconciliation::Run => {
                next.attempt = next.attempt.saturating_add(1);
                next.owner = owner.to_owned();
                next.started_at = now;
                next.lease_until = now.saturating_add(self.lease_ms);
                self.write(next).await.map(Delivery::Run)
            }
        }
    }

    /// One identity's record.
    pub async fn find(&self, identity: &str) -> Result<Option<EffectRecord>, ConsumerError> {
        Ok(self.store.get(&self.namespace, identity).await?)
    }

    /// Every record of the namespace (and unreadable entries).
    pub async fn list(&self) -> Result<Listing<EffectRecord>, ConsumerError> {
        Ok(self.store.list(&self.namespace).await?)
    }

    /// Forgets an identity: its next delivery runs the effect again.
    pub async fn forget(&self, identity: &str) -> Result<(), ConsumerError> {
        Ok(self.store.delete(&self.namespace, identity).await?)
    }

    /// Removes `done` records finished before `now - retention_ms` (a
    /// redelivery after that would run again: keep retention above the
    /// upstream's redelivery window). `started` records are never pruned.
    pub async fn prune(&self, now: u64, retention_ms: u64) -> Result<usize, ConsumerError> {
        let cutoff = now.saturating_sub(retention_ms);
        let records = self.list().await?.records;
        let old: Vec<&str> = records
            .iter()
            .filter(|r| r.state == EffectState::Done && r.finished_at.is_some_and(|at| at < cutoff))
            .map(|r| r.identity.as_str())
            .collect();
        self.store.delete_many(&self.namespace, &old).await?;
        Ok(old.len())
    }

    /// A compare-and-swap write; returns the record at its new revision.
    async fn write(&self, mut record: EffectRecord) -> Result<EffectRecord, ConsumerError> {
        match self.store.put(&record).await {
            Ok(revision) => {
                record.revision = revision;
                Ok(record)
            }
            Err(StoreError::Conflict { .. }) => Err(ConsumerError::Superseded {
                current: self
                    .store
                    .get(&self.namespace, &record.identity)
                    .await
                    .ok()
                    .flatten()
                    .map(Box::new),
            }),
            Err(e) => Err(ConsumerError::Storage(e)),
        }
    }
}
