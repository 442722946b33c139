//! `confirm(intent)` and `retry(intent, { expectedVersion })`: what a
//! person asks of one intent, each answered by a drive of it (a retry's
//! re-decision made by the drive, under the intent's lock).

use super::outcomes::{journal_failure, no_intent, unseen_if_theirs};
use crate::engine::drive::Locking;
use crate::engine::io::{CallId, Reply};
use crate::engine::{Child, Engine, TaskId, Wake};
use crate::journal::{redecide, IntentState, StoreError};
use crate::machine::{MachineConfig, Outcome};

/// What a person asked of one intent, and how far it got.
#[derive(Debug)]
pub(super) struct Person {
    asked: PersonAsks,
    intent: String,
    stage: PersonStage,
}

/// What a person asked of one intent.
#[derive(Clone, Copy, Debug)]
pub(super) enum PersonAsks {
    /// `confirm`: history's word on it now.
    Confirm,
    /// `retry`: a conflict re-decided, at this expected version (`None`: any).
    Retry(Option<i64>),
}

#[derive(Debug)]
enum PersonStage {
    Finding,
    Driving,
}

impl Engine {
    pub(super) fn step_person(
        &mut self,
        me: TaskId,
        call: CallId,
        p: &mut Person,
        wake: Wake,
    ) -> Option<Child> {
        let stage = std::mem::replace(&mut p.stage, PersonStage::Driving);
        let failed = |e: &mut Engine, outcome: Outcome| {
            e.settle(call, Reply::Failed(Box::new(outcome)));
            Some(Child::Nothing)
        };
        match (stage, wake) {
            (PersonStage::Finding, Wake::Child(Child::Record(found))) => {
                let mut record = match (unseen_if_theirs(found), p.asked) {
                    (Ok(Some(r)), _) => r,
                    (Ok(None), PersonAsks::Confirm) => return failed(self, no_intent(&p.intent)),
                    (Ok(None), PersonAsks::Retry(_)) => {
                        return failed(
                            self,
                            journal_failure(StoreError::Conflict { current: None }.into()),
                        )
                    }
                    (Err(e), _) => return failed(self, journal_failure(e)),
                };
                match p.asked {
                    PersonAsks::Confirm => {
                        if matches!(record.state, IntentState::Pending | IntentState::Queued) {
                            // Persisted, never sent: nothing can have been appended.
                            let mut outcome = Outcome::from_record(&record);
                            outcome.appended = Some(false);
                            self.settle(
                                call,
                                Reply::Outcome(Box::new(outcome.because("never sent"))),
                            );
                            return Some(Child::Nothing);
                        }
                        // Asked by a person: history is looked at now, not at the probe's next look.
                        let config = MachineConfig {
                            max_attempts: 0,
                            confirm_now: true,
                            ..self.config.machine.clone()
                        };
                        self.probe.wake(self.now);
                        self.drive(me, call, false, record, config, Locking::Ask);
                        None
                    }
                    PersonAsks::Retry(expected) => {
                        // Retried already (another tab, a second click) and on
                        // its way: heard from its drive, never re-decided twice
                        // (a queued one waits its turn: not this call's to send).
                        // Else re-decided by the drive, on the record it reads
                        // under the lock; refused at once when not in conflict.
                        let on_its_way = matches!(
                            record.state,
                            IntentState::Pending | IntentState::Sending | IntentState::Unknown
                        );
                        let locking = if on_its_way {
                            Locking::Ask
                        } else if let Err(e) = redecide(&mut record, expected) {
                            return failed(self, journal_failure(e));
                        } else {
                            Locking::Retry { expected }
                        };
                        let config = self.config.machine.clone();
                        self.drive(me, call, false, record, config, locking);
                        None
                    }
                }
            }
            (PersonStage::Driving, Wake::Child(Child::Drove(outcome))) => {
                self.settle(call, Reply::Outcome(outcome));
                Some(Child::Nothing)
            }
            (stage, wake) => {
                self.unasked(&wake, "confirm or retry");
                p.stage = stage;
                None
            }
        }
    }
}

impl Person {
    /// What a person asked of intent `intent`, about to be found.
    pub(super) fn new(asked: PersonAsks, intent: &str) -> Person {
        Person {
            asked,
            intent: intent.to_owned(),
            stage: PersonStage::Finding,
        }
    }
}
