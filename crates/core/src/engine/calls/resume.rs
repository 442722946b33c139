//! `resume()` and what the engine resumes by itself: every unresolved
//! intent, the next intent of a scope once the one before it settles, the
//! probe's look for what waits at rest and the drive of what waited once
//! history answers. Each intent is tried by its drive ([`Locking::Try`]).

use super::outcomes::journal_failure;
use crate::engine::drive::Locking;
use crate::engine::io::{CallId, Reply};
use crate::engine::{Child, Engine, Resumed, TaskId, Wake};
use crate::journal::{scope, IntentRecord, IntentState};

/// How many unresolved intents `resume()` drives at once: a journal left
/// with hundreds is finished in windows of this many.
const RESUME_WINDOW: usize = 16;

/// `resume()`, the `online` event's and the probe's: every unresolved
/// intent driven, a window at a time.
#[derive(Debug)]
pub(super) struct Resume {
    automatic: bool,
    /// The unresolved intents as listed (each read again under its lock).
    records: Vec<IntentRecord>,
    next: usize,
    results: Vec<Option<Resumed>>,
    running: usize,
}

impl Engine {
    /// Drives unresolved intent `record` under its lock, if it is free,
    /// for `parent`; its result comes back as [`Child::Resumed`].
    pub(super) fn resume_one(
        &mut self,
        parent: TaskId,
        record: IntentRecord,
        automatic: bool,
        index: usize,
    ) {
        // While the user signs out, the drive reports nothing (drive.rs).
        let config = self.config.machine.clone();
        let locking = Locking::Try { index, automatic };
        self.drive(parent, 0, false, record, config, locking);
    }

    pub(super) fn step_resume(
        &mut self,
        me: TaskId,
        call: CallId,
        r: &mut Resume,
        wake: Wake,
    ) -> Option<Child> {
        match wake {
            Wake::Start => {
                self.list(me, None);
                None
            }
            Wake::Child(Child::Listing(listed)) => {
                let listing = match listed {
                    Ok(l) => l,
                    Err(e) => {
                        self.settle(call, Reply::Failed(Box::new(journal_failure(e.into()))));
                        return Some(Child::Nothing);
                    }
                };
                r.records = listing
                    .records
                    .into_iter()
                    .filter(|rec| rec.state.is_resumable())
                    .collect();
                r.results = r.records.iter().map(|_| None).collect();
                self.resume_window(me, call, r)
            }
            Wake::Child(Child::Resumed(index, resumed)) => {
                if let Some(slot) = r.results.get_mut(index) {
                    *slot = Some(resumed);
                }
                r.running -= 1;
                if r.running > 0 {
                    return None;
                }
                self.resume_window(me, call, r)
            }
            wake => {
                self.unasked(&wake, "resume");
                None
            }
        }
    }

    /// Drives the next window of intents at once, or reports.
    fn resume_window(&mut self, me: TaskId, call: CallId, r: &mut Resume) -> Option<Child> {
        let upto = (r.next + RESUME_WINDOW).min(r.records.len());
        for i in r.next..upto {
            let record = r.records[i].clone();
            self.resume_one(me, record, r.automatic, i);
            r.running += 1;
        }
        r.next = upto;
        if r.running > 0 {
            return None;
        }
        let mut driven = Vec::new();
        let mut busy = Vec::new();
        for result in r.results.drain(..).flatten() {
            match result {
                Resumed::Driven(o) => driven.push(*o),
                Resumed::Busy(id) => busy.push(id),
                Resumed::Nothing => {}
            }
        }
        self.settle(call, Reply::Report { driven, busy });
        Some(Child::Nothing)
    }

    pub(super) fn step_advance(&mut self, me: TaskId, wake: Wake) -> Option<Child> {
        match wake {
            Wake::Child(Child::Listing(Ok(listing))) => {
                let scope = listing.records.first().and_then(|r| r.scope.clone());
                let next = scope
                    .as_deref()
                    .and_then(|s| scope::head(&listing.records, s))
                    .filter(|r| r.state == IntentState::Queued)
                    .cloned();
                match next {
                    Some(record) if !self.waited_here.contains(&record.intent_id) => {
                        self.resume_one(me, record, true, 0);
                        None
                    }
                    _ => Some(Child::Nothing),
                }
            }
            Wake::Child(Child::Resumed(..) | Child::Listing(Err(_))) => Some(Child::Nothing),
            wake => {
                self.unasked(&wake, "advance");
                None
            }
        }
    }

    pub(super) fn step_escalated(&mut self, wake: Wake) -> Option<Child> {
        match wake {
            Wake::Child(Child::Listing(listed)) => {
                if let Ok(listing) = listed {
                    let escalated: Vec<_> = listing
                        .records
                        .iter()
                        .filter(|r| r.state == IntentState::Escalated)
                        .map(IntentRecord::confirm_query)
                        .collect();
                    if !escalated.is_empty() {
                        self.probe.park(self.now);
                    }
                    self.probe.note(self.now, escalated);
                }
                Some(Child::Nothing)
            }
            wake => {
                self.unasked(&wake, "escalated");
                None
            }
        }
    }
}

impl Resume {
    pub(super) fn new(automatic: bool) -> Resume {
        Resume {
            automatic,
            records: Vec::new(),
            next: 0,
            results: Vec::new(),
            running: 0,
        }
    }
}
