//! Idempotent downstream consumers: code that reacts to domain events or
//! command results with side effects (an external API call, an email, a
//! local state change) records a stable input identity in its own durable
//! store, so "check + effect + record done" is recoverable.
//!
//! The protocol, per delivery of one identity:
//!
//! 1. [`Consumer::deliver`] reads the identity's [`EffectRecord`]:
//!    - none: it writes `started` (compare-and-swap, so one deliverer wins)
//!      and answers [`Delivery::Run`];
//!    - `done`: [`Delivery::Skip`], with the stored result;
//!    - `started` by a deliverer that is gone (its lock was released, or its
//!      lease ran out): [`Delivery::Reconcile`]. The effect may or may not
//!      have happened, so it is never run blindly again: the caller asks the
//!      external system and answers with [`Reconciliation`];
//!    - `started` by a live deliverer: [`Delivery::Busy`] until its lease ends.
//! 2. After the effect, [`Consumer::complete`] records `done`; if the effect
//!    failed, [`Consumer::fail`] keeps `started` (the next delivery reconciles).
//!
//! Pure Rust like the journal: time and the deliverer's identity come in as
//! parameters, storage is a [`RecordStore`](crate::journal::RecordStore) of [`EffectRecord`]s.

mod effects;
mod record;

pub use effects::{Consumer, ConsumerError, Delivery, Reconciliation, DEFAULT_LEASE_MS};
pub use record::{EffectRecord, EffectState};

#[cfg(test)]
mod tests;
