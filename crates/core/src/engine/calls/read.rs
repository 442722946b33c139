//! The journal's reads: one intent, every intent, the quarantine, pruning,
//! setting one aside, and `connect`'s first look at the store.

use super::outcomes::{journal_failure, unseen_if_theirs};
use crate::engine::io::{CallId, Reply};
use crate::engine::{Child, Engine, TaskId, Wake};
use crate::journal::prunable;

/// A read of the journal.
#[derive(Debug)]
pub enum Read {
    /// One intent by intentId, requestId or intentKey.
    Intent(String),
    /// Every intent, oldest first.
    Intents,
    /// What had to be quarantined.
    Quarantined,
    /// Deletes settled intents older than the retention window.
    Prune,
    /// `connect`'s look: the store answers.
    Connect,
    /// Sets an intent aside, as an unreadable record is (quarantine): no
    /// tab drives it again (its handling stopped the module twice).
    SetAside(String),
}

/// A read in progress: `prune()` removes what it found ([`Reading::left`])
/// [`PRUNE_BATCH`] at a time, each batch a removal (and a task) of its own.
#[derive(Debug)]
pub(super) struct Reading {
    read: Read,
    /// The ids prune has still to remove.
    left: Vec<String>,
    /// How many prune removes in all.
    removed: u32,
}

impl Engine {
    pub(super) fn step_read(
        &mut self,
        me: TaskId,
        call: CallId,
        r: &mut Reading,
        wake: Wake,
    ) -> Option<Child> {
        let Wake::Child(child) = wake else {
            self.unasked(&wake, "a call's child");
            return None;
        };
        let reply = match (&r.read, child) {
            (Read::Intent(_), Child::Record(found)) => match unseen_if_theirs(found) {
                Ok(r) => Reply::Record(r.map(Box::new)),
                Err(e) => Reply::Failed(Box::new(journal_failure(e))),
            },
            (_, Child::Listing(Err(e))) | (_, Child::Removed(Err(e))) => {
                Reply::Failed(Box::new(journal_failure(e.into())))
            }
            (Read::Intents, Child::Listing(Ok(l))) => Reply::Records(l.records),
            (Read::Quarantined, Child::Listing(Ok(l))) => Reply::Quarantined(l.quarantined),
            (Read::Connect, Child::Listing(Ok(_))) => Reply::Connected,
            (Read::Prune, Child::Listing(Ok(l))) => {
                let ids: Vec<String> = prunable(&l.records, self.now, self.config.retention_ms)
                    .into_iter()
                    .map(str::to_owned)
                    .collect();
                r.removed = ids.len() as u32;
                r.left = ids;
                return self.prune_next(me, r);
            }
            (Read::Prune, Child::Removed(Ok(()))) if !r.left.is_empty() => {
                return self.prune_next(me, r)
            }
            (Read::Prune, Child::Removed(Ok(()))) => Reply::Count(r.removed),
            (Read::SetAside(_), Child::Removed(Ok(()))) => Reply::Count(1),
            (_, child) => {
                self.unasked(&Wake::Child(child), "a read");
                return None;
            }
        };
        self.settle(call, reply);
        Some(Child::Nothing)
    }
}

/// How many intents `prune()` removes in one removal: a journal of 10,000
/// is pruned in many short tasks, not one long one.
const PRUNE_BATCH: usize = 500;

impl Engine {
    /// Removes the next batch of what prune removes.
    fn prune_next(&mut self, me: TaskId, r: &mut Reading) -> Option<Child> {
        let batch: Vec<String> = r.left.drain(..r.left.len().min(PRUNE_BATCH)).collect();
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        self.remove(me, &refs);
        None
    }
}

impl Reading {
    /// Read `read`, about to begin.
    pub(super) fn new(read: Read) -> Reading {
        Reading {
            read,
            left: Vec::new(),
            removed: 0,
        }
    }
}
