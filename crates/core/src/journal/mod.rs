//! The intent journal: the durable memory that makes "one requestId per
//! business intent" true across timeouts, reloads, crashes and cold starts.
//!
//! Pure Rust: time and randomness come in as parameters, storage is the
//! [`IntentStore`] trait (IndexedDB, localStorage and adapters live in the
//! web layer; [`MemoryStore`] here).

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
    evictable, prunable, redecided, sent_again, take_place, withdrawal, withdrawal_refused,
};
pub use intents::{
    new_record, replay, Begun, Journal, JournalError, NewIntent, DEFAULT_RETENTION_MS,
};
pub(crate) use read_back::{is_secret, ReadBack, Reader};
pub use record::{
    AggregateIdentity, Attempt, AttemptOutcome, Body, CommandSpec, IntentRecord, IntentState,
    RecordError, StoredText, WaitEnd, WaitSpec,
};

pub use store::{
    next_revision, IntentStore, Listing, MemoryStore, Quarantined, RecordKind, RecordStore,
    StoreError, StoredRecord, Unavailable,
};

#[cfg(test)]
mod scope_tests;
#[cfg(test)]
mod tests;
