//! `send`, `sendAndWait`, `sendAndWaitStream`: the call that hears its
//! intent's machines one after another, each a child task: its begin (a
//! key's stored intent replayed, a new one placed in its scope and written,
//! `begin.rs`), its turn in its scope when queued (`turn.rs`), then its
//! drive (`drive.rs`), whose outcome the call settles with.

use crate::engine::drive::Locking;
use crate::engine::io::{CallId, Reply};
use crate::engine::{Child, Engine, TaskId, Wake};
use crate::journal::{Begun, IntentRecord, IntentState};
use crate::machine::{MachineConfig, Outcome, Status};

/// What a send call settles with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    /// `send`: the Outcome, whatever it is.
    Outcome,
    /// `sendAndWait`: the result on success, a `CommandError` otherwise.
    AndWait,
    /// `sendAndWaitStream`: the outcome at the stream's end (its elements emitted as they come).
    Stream,
}

/// A send: its intent begun, its turn, its drive, each a child task that
/// hands the intent on to the next; the call settles with what the last
/// one reports.
#[derive(Debug)]
pub(super) struct Send {
    mode: SendMode,
    config: MachineConfig,
    create: bool,
    stage: SendStage,
}

impl Send {
    /// A send (`create` as the caller's command made it), its begin under way.
    pub(super) fn new(mode: SendMode, config: MachineConfig, create: bool) -> Send {
        Send {
            mode,
            config,
            create,
            stage: SendStage::Beginning,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum SendStage {
    /// Its intent is being begun (a child task, `begin.rs`).
    Beginning,
    /// Its turn in its scope runs (a child task, `turn.rs`).
    Turn,
    /// Its drive runs (a child task, `drive.rs`); the send ends with its outcome.
    Driving,
}

impl Engine {
    pub(super) fn step_send(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        wake: Wake,
    ) -> Option<Child> {
        let outcome = match (s.stage, wake) {
            (SendStage::Beginning, Wake::Child(Child::Began(began))) => match began {
                Ok(Begun::Settled(record)) => Outcome::from_record(&record),
                Ok(Begun::Created(record) | Begun::Unresolved(record)) => {
                    if record.scope.is_some() && record.state == IntentState::Queued {
                        return self.enter_turn(me, call, s, record);
                    }
                    return self.drive_send(me, call, s, record);
                }
                Err(outcome) => {
                    self.settle(call, Reply::Failed(Box::new(outcome)));
                    return Some(Child::Nothing);
                }
            },
            (SendStage::Turn, Wake::Child(Child::Turned(record, came))) => {
                self.turn_over(&record, came);
                if came {
                    return self.drive_send(me, call, s, record);
                }
                Outcome::from_record(&record)
            }
            (SendStage::Driving, Wake::Child(Child::Drove(outcome))) => *outcome,
            (_, wake) => {
                self.unasked(&wake, "a send");
                return None;
            }
        };
        let outcome = outcome.with_create_hint(s.create);
        self.settle(call, send_reply(s.mode, outcome));
        Some(Child::Nothing)
    }

    /// Drives the send's intent under its lock.
    fn drive_send(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        record: IntentRecord,
    ) -> Option<Child> {
        let emit = s.mode == SendMode::Stream;
        self.drive(me, call, emit, record, s.config.clone(), Locking::Ask);
        s.stage = SendStage::Driving;
        None
    }

    /// A scoped intent is sent in its turn: while an earlier intent of its
    /// scope is unsettled it stays `queued`, and the caller waits, up to its
    /// timeout, for its turn ([`super::turn`]). When the caller's wait ends
    /// first, the outcome says nothing was sent, and the intent is sent in
    /// its turn by whoever settles the one before it.
    fn enter_turn(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        record: IntentRecord,
    ) -> Option<Child> {
        // Its caller, here, sends it: no other drive here does, until the turn is over.
        self.waited_here.push(record.intent_id.clone());
        self.waiting_scopes
            .push(record.scope.clone().unwrap_or_default());
        // An abort while it waits says what was written: its ids, nothing sent.
        self.watch_write(call, record.clone());
        let until = self.now.saturating_add(s.config.caller_timeout_ms as i64);
        self.wait_turn(me, call, record, until);
        s.stage = SendStage::Turn;
        None
    }

    /// Its turn came (`came`: driven now), or the caller's wait ended (it
    /// settles with its intent as it stands: nothing sent).
    fn turn_over(&mut self, record: &IntentRecord, came: bool) {
        let id = &record.intent_id;
        if let Some(i) = self.waited_here.iter().position(|w| w == id) {
            self.waited_here.swap_remove(i);
        }
        let scope = record.scope.clone().unwrap_or_default();
        if let Some(i) = self.waiting_scopes.iter().position(|w| *w == scope) {
            self.waiting_scopes.swap_remove(i);
        }
        if came {
            return;
        }
        // The one waiting behind it looks at the scope now: nobody here
        // drives this one any more.
        self.hear(id, true, false);
        // The one before it may have settled just now, while this caller
        // still counted as its driver: look once more.
        self.advance_scope(scope);
    }
}

/// What a send call settles with.
fn send_reply(mode: SendMode, outcome: Outcome) -> Reply {
    let outcome = Box::new(outcome);
    match mode {
        SendMode::Outcome => Reply::Outcome(outcome),
        SendMode::AndWait if outcome.status == Status::Succeeded => Reply::Succeeded(outcome),
        SendMode::AndWait => Reply::Failed(outcome),
        SendMode::Stream => Reply::StreamOutcome(outcome),
    }
}
