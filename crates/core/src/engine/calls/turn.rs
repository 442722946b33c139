//! A queued send's turn in its scope, a machine of its own beside the
//! send's drive: it waits, up to its caller's timeout, while an earlier
//! intent of its scope is unsettled, and drives an earlier one nobody
//! drives (its tab was closed). It ends when its turn has come, or when
//! its caller's wait ended first; the send drives, or settles, with what
//! it reports ([`Child::Turned`]).

use crate::engine::io::CallId;
use crate::engine::{Child, Engine, Next, Step, TaskId, Wake};
use crate::journal::{scope, IntentRecord, IntentState};

/// How often a queued intent's caller, next in its scope, looks at its
/// scope again while no announcement came (a runtime without
/// BroadcastChannel hears no other tab).
const TURN_POLL_MS: i64 = 2_000;

/// The same for a queued intent with others between it and the scope's head.
const FAR_TURN_POLL_MS: i64 = 10_000;

/// A queued intent waiting for its turn.
#[derive(Debug)]
pub(super) struct Turn {
    /// The call waiting (its caller may leave).
    call: CallId,
    /// The intent, as last read.
    record: IntentRecord,
    /// When its caller's wait ends.
    until: i64,
    stage: TurnStage,
    /// The unsettled intent just before it (whose settling it listens for).
    before: String,
    /// An announcement it listens for came while it was not waiting.
    poked: bool,
}

#[derive(Debug, PartialEq, Eq)]
enum TurnStage {
    /// Made, not yet stepped.
    Starting,
    /// Reading its scope.
    Listing,
    /// Driving the scope's head, which nobody here drives.
    Ahead,
    /// Waiting for an announcement, or its poll's timer.
    Waiting,
}

impl Step for Turn {
    fn step(mut self: Box<Self>, engine: &mut Engine, me: TaskId, wake: Wake) -> Next {
        match engine.step_turn(me, &mut self, wake) {
            Some(came) => Next::Done(Child::Turned(self.record, came)),
            None => Next::Keep(self),
        }
    }

    fn intent_id(&self) -> Option<&str> {
        Some(&self.record.intent_id)
    }
}

/// A turn's step: `None` while it waits, `Some(came)` once it is over
/// (`came`: its turn has come; else its caller's wait ended).
type Over = Option<bool>;

impl Engine {
    /// Waits for queued `record`'s turn for `parent`, the send of call
    /// `call`, until `until`. It starts at once: the announcements it
    /// listens for are heard from this moment.
    pub(super) fn wait_turn(
        &mut self,
        parent: TaskId,
        call: CallId,
        record: IntentRecord,
        until: i64,
    ) {
        let turn = Turn {
            call,
            record,
            until,
            stage: TurnStage::Starting,
            before: String::new(),
            poked: false,
        };
        self.start(parent, Box::new(turn));
    }

    /// Its first step: it listens for its own intent's announcements, and
    /// for its settling of the one it waits for when that one waits here
    /// too (a burst into one scope): its settling, or its caller giving up,
    /// is heard here, so the scope need not be read again until then.
    fn turn_starts(&mut self, me: TaskId, t: &mut Turn) -> Over {
        let own = t.record.intent_id.clone();
        let waits_for = t.record.waits_for.as_ref();
        match waits_for.filter(|b| self.waited_here.contains(b)) {
            Some(before) => {
                t.before = before.clone();
                self.listen(me, [t.before.clone(), own]);
                self.turn_wait(me, t, false)
            }
            None => {
                self.listen(me, [own.clone(), own]);
                self.turn_look(me, t)
            }
        }
    }

    /// Looks at the scope again, unless its turn has come.
    fn turn_look(&mut self, me: TaskId, t: &mut Turn) -> Over {
        if t.record.state != IntentState::Queued {
            return Some(true);
        }
        let scope = t.record.scope.clone().unwrap_or_default();
        self.list(me, Some(&scope));
        t.stage = TurnStage::Listing;
        None
    }

    fn step_turn(&mut self, me: TaskId, t: &mut Turn, wake: Wake) -> Over {
        match (&t.stage, wake) {
            (TurnStage::Starting, Wake::Start) => self.turn_starts(me, t),
            (TurnStage::Listing, Wake::Child(Child::Listing(listed))) => {
                // Never a guess: a journal that cannot say whose turn it is sends nothing.
                let Ok(listing) = listed else {
                    return Some(false);
                };
                let records = listing.records;
                // Its own record as stored now (withdrawn, or sent by another tab meanwhile).
                match records.iter().find(|r| r.intent_id == t.record.intent_id) {
                    Some(fresh) => t.record = fresh.clone(),
                    None => return Some(false),
                }
                if t.record.state != IntentState::Queued {
                    return Some(true);
                }
                let Some(head) = scope::ahead_of(&records, &t.record) else {
                    return Some(true);
                };
                let before = scope::just_before(&records, &t.record).unwrap_or(head);
                t.before = before.intent_id.clone();
                self.listen(me, [t.before.clone(), t.record.intent_id.clone()]);
                let drivable = head.state.is_unresolved();
                let next = t.before == head.intent_id;
                if drivable && !self.waited_here.contains(&head.intent_id) {
                    // Driven here only when no one holds it; never without Web Locks.
                    let head = head.clone();
                    self.resume_one(me, head, true, 0);
                    t.stage = TurnStage::Ahead;
                    return None;
                }
                self.turn_wait(me, t, next)
            }
            (TurnStage::Ahead, Wake::Child(Child::Resumed(..))) => self.turn_wait(me, t, true),
            // Its turn came: the drive reads its record again under its lock.
            (TurnStage::Waiting, Wake::Poke(true)) => Some(true),
            (TurnStage::Waiting, Wake::Timer | Wake::Poke(_)) => {
                // Woken early (a poke), its poll's timer goes: it lists now.
                self.untime(me);
                self.turn_look(me, t)
            }
            (_, Wake::Poke(_)) => {
                t.poked = true;
                None
            }
            (_, wake) => {
                self.unasked(&wake, "a scope's turn");
                None
            }
        }
    }

    /// Waits for the one just before it (or its own withdrawal), or polls:
    /// a burst in one scope wakes one waiter per settled intent, not all;
    /// the time bounds the wait where no announcement comes, longer for
    /// those further back.
    fn turn_wait(&mut self, me: TaskId, t: &mut Turn, next: bool) -> Over {
        let left = t.until - self.now;
        let gone = self.watched.iter().any(|w| w.call == t.call && w.left);
        if left <= 0 || gone {
            return Some(false);
        }
        if std::mem::take(&mut t.poked) {
            return self.turn_look(me, t);
        }
        let poll = if next { TURN_POLL_MS } else { FAR_TURN_POLL_MS };
        self.timer(me, self.now + left.min(poll));
        t.stage = TurnStage::Waiting;
        None
    }
}
