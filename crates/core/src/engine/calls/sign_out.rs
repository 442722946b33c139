//! `signOut`, `clear()` and `adopt()`: the user's intents on this device
//! parked, removed or made this user's, each under its lock.

use super::outcomes::journal_failure;
use crate::engine::drive::lock_name;
use crate::engine::io::{CallId, Do, Done, LockKind, Locked, OpId, Reply, SignOutReport};
use crate::engine::{Child, Engine, TaskId, Wake};
use crate::journal::IntentRecord;

#[derive(Debug)]
pub(super) struct Purge {
    purge: bool,
    close: bool,
    adopt: bool,
    /// The records it acts on.
    records: Vec<IntentRecord>,
    /// The locks answered so far, one per record in order: the op of each
    /// held one (`OpId::NONE`: none to let go, where there are no locks or a settled
    /// intent needs none), or `None` when another tab or worker holds it
    /// (that intent is left).
    locks: Vec<Option<OpId>>,
    /// The lock asked for last.
    asked: OpId,
    /// Answers still to come: the removal's, or an adoption's writes.
    waiting: usize,
    stage: PurgeStage,
    report: SignOutReport,
}

/// Where a sign-out stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PurgeStage {
    Listing,
    Locking,
    /// Removing, or writing an adoption.
    Removing,
    /// Looking at what is left.
    Looking,
    /// Removing the quarantine.
    Clearing,
    /// Letting go of the store.
    Destroying,
}

impl Engine {
    pub(super) fn step_purge(
        &mut self,
        me: TaskId,
        call: CallId,
        p: &mut Purge,
        wake: Wake,
    ) -> Option<Child> {
        let failure = match (p.stage, wake) {
            (PurgeStage::Listing, Wake::Child(Child::Listing(Ok(listing)))) => {
                let mut records = listing.records;
                if !(p.purge || p.adopt) {
                    let all = records.len();
                    records.retain(|r| r.state.is_settled());
                    p.report.parked = (all - records.len()) as u32;
                }
                p.records = records;
                p.stage = PurgeStage::Locking;
                return self.purge_next(me, call, p);
            }
            (PurgeStage::Locking, Wake::Op(Done::Locked(locked))) => {
                p.locks.push(match locked {
                    Locked::Held => Some(p.asked),
                    Locked::Unsupported => Some(OpId::NONE),
                    Locked::Busy => {
                        let id = p.records[p.locks.len()].intent_id.clone();
                        p.report.busy.push(id);
                        None
                    }
                });
                return self.purge_next(me, call, p);
            }
            (PurgeStage::Removing, Wake::Child(Child::Wrote(written))) => {
                p.waiting -= 1;
                p.report.removed += u32::from(written.is_ok());
                return self.purge_next(me, call, p);
            }
            (PurgeStage::Removing, Wake::Child(Child::Removed(Ok(())))) => {
                p.waiting -= 1;
                return self.purge_next(me, call, p);
            }
            (PurgeStage::Looking, Wake::Child(Child::Listing(Ok(listing)))) => {
                if !listing.records.is_empty() || listing.others > 0 {
                    return self.purge_over(call, p);
                }
                // Nothing of anyone is left: what was quarantined goes too.
                let keys = listing.quarantined.into_iter().map(|q| q.key).collect();
                self.op(me, Do::Remove { keys });
                p.stage = PurgeStage::Clearing;
                return None;
            }
            (PurgeStage::Clearing, Wake::Op(Done::Removed(Ok(())))) if p.close => {
                self.op(me, Do::Destroy);
                p.stage = PurgeStage::Destroying;
                return None;
            }
            (PurgeStage::Clearing | PurgeStage::Destroying, Wake::Op(Done::Removed(_))) => {
                return self.purge_over(call, p)
            }
            (_, Wake::Child(Child::Listing(Err(e)) | Child::Removed(Err(e))))
            | (_, Wake::Op(Done::Removed(Err(e)))) => e,
            (_, wake) => {
                self.unasked(&wake, "purge");
                return None;
            }
        };
        self.unlock_all(p);
        self.signed_out(p);
        let outcome = journal_failure(failure.into());
        self.settle(call, Reply::Failed(Box::new(outcome)));
        Some(Child::Nothing)
    }

    /// The next lock (one at a time, none waited for: one another tab
    /// holds is left); then the removal, or the adoption's writes, of what
    /// it holds and the settled; then the look at what is left.
    fn purge_next(&mut self, me: TaskId, call: CallId, p: &mut Purge) -> Option<Child> {
        while p.stage == PurgeStage::Locking && p.locks.len() < p.records.len() {
            let record = &p.records[p.locks.len()];
            if record.state.is_settled() && !p.adopt {
                p.locks.push(Some(OpId::NONE));
                continue;
            }
            let name = lock_name(&self.config.namespace, &record.intent_id);
            let lock = Do::Lock {
                name,
                wait_ms: 0,
                kind: LockKind::Intent,
            };
            p.asked = self.op(me, lock);
            return None;
        }
        if p.stage == PurgeStage::Locking {
            p.stage = PurgeStage::Removing;
            // What it holds the lock of (or needs none for: the settled).
            let mut ids = Vec::new();
            for (i, record) in p.records.iter().enumerate() {
                if p.locks.get(i).is_some_and(Option::is_none) {
                    continue;
                }
                if p.adopt {
                    let mut record = record.clone();
                    record.user = self.config.user.clone();
                    record.updated_at = self.now;
                    p.waiting += 1;
                    self.write(me, &record);
                } else {
                    ids.push(record.intent_id.as_str());
                    if !record.state.is_settled() {
                        p.report.unresolved.push(record.clone());
                    }
                }
            }
            if !p.adopt {
                p.report.removed = ids.len() as u32;
                self.remove(me, &ids);
                p.waiting = 1;
            }
        }
        if p.waiting > 0 {
            return None;
        }
        self.unlock_all(p);
        if p.adopt {
            self.settle(call, Reply::Count(p.report.removed));
            return Some(Child::Nothing);
        }
        if !p.purge {
            return self.purge_over(call, p);
        }
        self.list(me, None);
        p.stage = PurgeStage::Looking;
        None
    }

    /// Lets go of the locks it holds.
    fn unlock_all(&mut self, p: &mut Purge) {
        for lock in p.locks.drain(..).flatten().filter(|op| *op != OpId::NONE) {
            self.tell(Do::Unlock { lock });
        }
    }

    /// A sign-out is over (done or failed): resumes drive again.
    fn signed_out(&mut self, p: &Purge) {
        if !p.adopt {
            self.signing_out = self.signing_out.saturating_sub(1);
        }
    }

    fn purge_over(&mut self, call: CallId, p: &mut Purge) -> Option<Child> {
        self.signed_out(p);
        let report = std::mem::take(&mut p.report);
        self.settle(call, Reply::SignedOut(Box::new(report)));
        if p.close {
            self.tell(Do::Close);
        }
        Some(Child::Nothing)
    }
}

impl Purge {
    /// A sign-out (`purge`, `close`) or an adoption, about to list.
    pub(super) fn new(purge: bool, close: bool, adopt: bool) -> Purge {
        Purge {
            purge,
            close,
            adopt,
            records: Vec::new(),
            locks: Vec::new(),
            asked: OpId::NONE,
            waiting: 0,
            stage: PurgeStage::Listing,
            report: SignOutReport::default(),
        }
    }
}
