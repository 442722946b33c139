//! `withdraw(intent)` and `withdrawScope(scope)`: a queued intent that was
//! never sent, withdrawn by a compare-and-swap against its first attempt.

use super::outcomes::{journal_failure, no_intent, unseen_if_theirs};
use crate::engine::io::{CallId, Reply};
use crate::engine::{Child, Engine, TaskId, Wake};
use crate::journal::{
    withdrawal, withdrawal_refused, IntentRecord, IntentState, JournalError, StoreError,
};
use crate::machine::{Outcome, Status};

#[derive(Debug)]
pub(super) struct Withdraw {
    /// `withdrawScope`'s scope.
    scope: Option<String>,
    /// The scope's queued intents left to withdraw.
    queue: Vec<String>,
    /// The intent being withdrawn.
    target: String,
    /// Its withdrawal, being written.
    record: Option<Box<IntentRecord>>,
    withdrawn: Vec<IntentRecord>,
}

impl Engine {
    /// Withdraws an intent that has not begun an attempt (queued, or pending
    /// and never sent): it is settled `withdrawn`, nothing of it is ever
    /// sent, and its scope's next intent may go. The write is a
    /// compare-and-swap against the one that would begin its first attempt,
    /// so exactly one of them happens; one that lost is decided again on
    /// what is stored now.
    pub(super) fn step_withdraw(
        &mut self,
        me: TaskId,
        call: CallId,
        w: &mut Withdraw,
        wake: Wake,
    ) -> Option<Child> {
        let Wake::Child(child) = wake else {
            self.unasked(&wake, "a call's child");
            return None;
        };
        match child {
            Child::Listing(listed) => match listed {
                Ok(listing) => {
                    w.queue = listing
                        .records
                        .into_iter()
                        .filter(|r| r.state == IntentState::Queued)
                        .map(|r| r.intent_id)
                        .rev()
                        .collect();
                    self.withdraw_next(me, call, w)
                }
                Err(e) => self.withdraw_failed(call, journal_failure(e.into())),
            },
            Child::Record(found) => self.withdraw_found(me, call, w, found),
            Child::Wrote(written) => self.withdraw_written(me, call, w, written),
            child => {
                self.unasked(&Wake::Child(child), "withdraw");
                None
            }
        }
    }

    /// The intent to withdraw, as stored now.
    fn withdraw_found(
        &mut self,
        me: TaskId,
        call: CallId,
        w: &mut Withdraw,
        found: Result<Option<IntentRecord>, JournalError>,
    ) -> Option<Child> {
        match unseen_if_theirs(found) {
            Ok(Some(record)) if record.state == IntentState::Withdrawn => {
                if w.scope.is_some() {
                    return self.withdraw_next(me, call, w);
                }
                self.withdrawn(call, &record)
            }
            Ok(Some(record)) => match withdrawal(record) {
                Ok(mut record) => {
                    record.updated_at = self.now;
                    self.write(me, &record);
                    w.record = Some(Box::new(record));
                    None
                }
                Err(JournalError::NotWithdrawable { .. }) if w.scope.is_some() => {
                    self.withdraw_next(me, call, w)
                }
                Err(JournalError::NotWithdrawable { record }) => {
                    let why = withdrawal_refused(&record);
                    let mut outcome = Outcome::from_record(&record);
                    let refused = Outcome::failed("NotWithdrawable", &why, Status::Unknown, None);
                    outcome.error = refused.error;
                    self.withdraw_failed(call, outcome.because(&why))
                }
                Err(e) => self.withdraw_failed(call, journal_failure(e)),
            },
            Ok(None) if w.scope.is_some() => self.withdraw_next(me, call, w),
            Ok(None) => self.withdraw_failed(call, no_intent(&w.target)),
            Err(e) => self.withdraw_failed(call, journal_failure(e)),
        }
    }

    /// One intent withdrawn (by this call or another tab): told, its scope's
    /// next may go, and the caller hears it.
    fn withdrawn(&mut self, call: CallId, record: &IntentRecord) -> Option<Child> {
        self.announce(record, record.revision);
        if let Some(scope) = record.scope.clone() {
            self.advance_scope(scope);
        }
        self.settle(call, Reply::Outcome(Box::new(Outcome::from_record(record))));
        Some(Child::Nothing)
    }

    /// The withdrawal's write answered.
    fn withdraw_written(
        &mut self,
        me: TaskId,
        call: CallId,
        w: &mut Withdraw,
        written: Result<u64, StoreError>,
    ) -> Option<Child> {
        let Some(mut record) = w.record.take() else {
            self.unasked(&Wake::Child(Child::Wrote(written)), "withdraw");
            return None;
        };
        match written {
            Ok(revision) => {
                record.set_revision(revision);
                if w.scope.is_some() {
                    w.withdrawn.push(*record);
                    return self.withdraw_next(me, call, w);
                }
                self.withdrawn(call, &record)
            }
            // Changed meanwhile (its first attempt begun, or
            // withdrawn by another tab): decide again on what is stored now.
            Err(StoreError::Conflict { .. }) => {
                let target = record.intent_id.clone();
                self.find(me, &target, false);
                None
            }
            Err(e) => self.withdraw_failed(call, journal_failure(e.into())),
        }
    }

    /// `withdrawScope`: the next queued intent, or the count.
    fn withdraw_next(&mut self, me: TaskId, call: CallId, w: &mut Withdraw) -> Option<Child> {
        if let Some(id) = w.queue.pop() {
            w.target = id.clone();
            self.find(me, &id, false);
            return None;
        }
        for record in std::mem::take(&mut w.withdrawn) {
            self.announce(&record, record.revision);
            w.queue.push(record.intent_id);
        }
        self.settle(call, Reply::Count(w.queue.len() as u32));
        Some(Child::Nothing)
    }

    fn withdraw_failed(&mut self, call: CallId, outcome: Outcome) -> Option<Child> {
        self.settle(call, Reply::Failed(Box::new(outcome)));
        Some(Child::Nothing)
    }
}

impl Withdraw {
    /// A withdrawal of intent `target`, or of scope `target`'s queued intents.
    pub(super) fn new(target: &str, scope: bool) -> Withdraw {
        Withdraw {
            scope: scope.then(|| target.to_owned()),
            queue: Vec::new(),
            target: target.to_owned(),
            record: None,
            withdrawn: Vec::new(),
        }
    }
}
