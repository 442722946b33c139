//! The intent journal: the durable memory that makes "one requestId per
//! business intent" true across timeouts, reloads, crashes and cold starts.
//!
//! Pure Rust: time and randomness come in as parameters. What is decided
//! here (a new intent's record and ids, a key given again, places in a
//! scope, withdrawal, eviction, retention) is performed by the engine,
//! whose storage operations the executor carries out (`store.js`, one
//! store for every backend); the consumer's records go through the
//! [`RecordStore`] contract, [`MemoryStore`] here.

pub mod fingerprint;
pub mod ids;
pub mod intents;
pub(crate) mod read_back;
pub mod record;
pub mod scope;
pub(crate) mod sha1;
pub mod store;

pub(crate) use ids::derived_request_id;
pub use ids::{RandomSource, RequestIdPolicy, SeededRandom};
pub(crate) use intents::{
    evictable, prunable, redecide, sent_again, take_place, withdrawal, withdrawal_refused,
};
pub use intents::{new_record, replay, Begun, JournalError, NewIntent, DEFAULT_RETENTION_MS};
pub(crate) use read_back::{is_secret, ReadBack, Reader};
pub use record::{
    AggregateIdentity, Attempt, AttemptOutcome, Body, CommandSpec, IntentRecord, IntentState,
    RecordError, StoredText, WaitEnd, WaitSpec,
};

pub use store::{
    next_revision, Listing, MemoryStore, Quarantined, RecordKind, RecordStore, StoreError,
    StoredRecord, Unavailable,
};

#[cfg(test)]
mod scope_tests;
#[cfg(test)]
pub(crate) mod tests;
