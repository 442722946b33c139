//! The intent journal: the durable memory that makes "one requestId per
//! business intent" true across timeouts, reloads, crashes and cold starts.
//!
//! Pure Rust: time and randomness come in as parameters, storage is the
//! [`IntentStore`] trait (IndexedDB, localStorage and adapters live in the
//! web layer; [`MemoryStore`] here).

pub mod fingerprint;
pub mod ids;
pub mod intents;
pub mod read_back;
pub mod record;
pub mod scope;
pub mod sha1;
pub mod store;

pub use ids::{derived_request_id, random_id, RandomSource, RequestIdPolicy, SeededRandom};
pub use intents::{
    evictable, new_record, prunable, redecided, replay, sent_again, take_place, withdrawal,
    withdrawal_refused, Begun, Journal, JournalError, NewIntent, DEFAULT_RETENTION_MS,
};
pub use read_back::{is_secret, ReadBack, Reader, CREDENTIAL_HEADERS};
pub use record::{
    AggregateIdentity, Attempt, AttemptOutcome, Body, CommandSpec, IntentRecord, IntentState,
    RecordError, StoredText, WaitEnd, WaitSpec, FIRST_SCHEMA_VERSION, SCHEMA_VERSION,
    SCOPED_SCHEMA_VERSION,
};
pub use store::{
    next_revision, IntentStore, Listing, MemoryStore, Quarantined, RecordKind, RecordStore,
    StoreError, StoredRecord, Unavailable,
};

#[cfg(test)]
mod scope_tests;
#[cfg(test)]
mod tests;
