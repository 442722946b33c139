//! A send's intent begun, a machine of its own before its turn and its
//! drive: a keyed one's stored intent replayed (or one refused before the
//! bus sent again), a scoped one placed in its scope's line (line.rs) and
//! written, a keyed one written at once; when another tab wrote it first,
//! theirs read. It reports [`Child::Began`]: the intent to drive, one
//! already settled, or the failure nothing was sent with.

use super::outcomes::{journal_failure, signing_out};
use crate::engine::io::{CallId, Done, Locked};
use crate::engine::{Child, Engine, Next, Step, TaskId, Wake};
use crate::journal::{
    replay, sent_again, take_place, Begun, IntentRecord, IntentState, JournalError, StoreError,
};
use crate::machine::{Outcome, Status};
use crate::text::text;

/// An intent being begun.
#[derive(Debug)]
pub(super) struct Begin {
    /// Whose watch records its first write (0: nobody's).
    call: CallId,
    key: Option<String>,
    /// The intent: new, replayed or sent again.
    record: IntentRecord,
    fingerprint: String,
    stage: BeginStage,
}

#[derive(Debug, Clone, Copy)]
enum BeginStage {
    /// Made, not yet stepped.
    Starting,
    /// Waiting for its turn in its scope's line (the scope's lock).
    Lining,
    /// Reading the key's stored intent.
    Existing,
    /// Reading its scope, to take its place.
    Placing { resent: bool },
    /// Writing the record (a new one, or one sent again).
    Writing { resent: bool },
    /// Another tab wrote it first: reading theirs.
    Reread { resent: bool },
}

/// A step: `None` while it goes on, else how it began (or the failure).
type Ended = Option<Result<Begun, Outcome>>;

impl Step for Begin {
    fn step(mut self: Box<Self>, engine: &mut Engine, me: TaskId, wake: Wake) -> Next {
        let ended = engine.step_begin(me, &mut self, wake);
        engine.began(me, self, ended)
    }

    fn intent_id(&self) -> Option<&str> {
        Some(&self.record.intent_id)
    }
}

impl Engine {
    /// Begins `record` for `parent`, the send of call `call` (`key` and
    /// `fingerprint` as the caller's command made them), at once: a scoped
    /// one joins its scope's line in the order of the calls.
    pub(super) fn begin(
        &mut self,
        parent: TaskId,
        call: CallId,
        key: Option<String>,
        record: IntentRecord,
        fingerprint: String,
    ) {
        let stage = BeginStage::Starting;
        let begin = Begin {
            call,
            key,
            record,
            fingerprint,
            stage,
        };
        self.start(parent, Box::new(begin));
    }

    /// Kept while it goes on; once it ends, its place in its line is taken
    /// or not needed (the next send in line takes its own), a queued intent
    /// is announced, and its send hears how it began.
    fn began(&mut self, me: TaskId, b: Box<Begin>, ended: Ended) -> Next {
        let Some(ended) = ended else {
            return Next::Keep(b);
        };
        self.hand_on(me, b.record.scope.as_deref(), false);
        if let Ok(Begun::Created(r) | Begun::Unresolved(r)) = &ended {
            if r.state == IntentState::Queued {
                self.announce(r, r.revision);
            }
        }
        Next::Done(Child::Began(ended))
    }

    fn step_begin(&mut self, me: TaskId, b: &mut Begin, wake: Wake) -> Ended {
        match (b.stage, wake) {
            // A scoped intent takes its place under the scope's lock, so two
            // tabs writing at the same moment agree on the order.
            (BeginStage::Starting, Wake::Start) => match b.record.scope.clone() {
                Some(scope) => {
                    self.join_line(me, &scope);
                    b.stage = BeginStage::Lining;
                    None
                }
                None => self.begin_now(me, b),
            },
            (BeginStage::Lining, Wake::Op(Done::Locked(locked))) => {
                if let Some(i) = self.line_at(b.record.scope.as_deref()) {
                    self.lines[i].locked = Some(locked);
                }
                if locked == Locked::Busy {
                    let why = text!(
                        "scope `",
                        b.record.scope.as_deref().unwrap_or_default(),
                        "` stayed locked by another tab or worker; nothing was sent"
                    );
                    return Some(Err(Outcome::failed(
                        "IntentBusy",
                        &why,
                        Status::Unknown,
                        Some(false),
                    )));
                }
                self.begin_now(me, b)
            }
            (BeginStage::Existing, Wake::Child(Child::Record(found))) => {
                self.existing(me, b, found)
            }
            (BeginStage::Placing { resent }, Wake::Child(Child::Listing(listed))) => match listed {
                Ok(listing) => {
                    if let Some(i) = self.line_at(b.record.scope.as_deref()) {
                        self.lines[i].view = Some(listing.records);
                    }
                    self.place_in_line(me, b, resent)
                }
                Err(e) => Some(Err(journal_failure(e.into()))),
            },
            (BeginStage::Writing { resent }, Wake::Child(Child::Wrote(written))) => {
                // A scoped intent's write is its place's: stored now.
                self.hand_on(0, b.record.scope.as_deref(), false);
                self.wrote(me, b, resent, written)
            }
            (BeginStage::Reread { resent }, Wake::Child(Child::Record(found))) => {
                let begun = match (found, resent) {
                    (Ok(Some(now)), true) if now.state.is_settled() => Ok(Begun::Settled(now)),
                    (Ok(Some(now)), true) => Ok(Begun::Unresolved(now)),
                    (Ok(None), true) => Ok(Begun::Unresolved(b.record.clone())),
                    (Ok(Some(existing)), false) => {
                        replay(&b.key.clone().unwrap_or_default(), existing, &b.fingerprint)
                    }
                    (Ok(None), false) => Err(StoreError::Conflict { current: None }.into()),
                    (Err(e), _) => Err(e),
                };
                Some(begun.map_err(journal_failure))
            }
            (_, wake) => {
                self.unasked(&wake, "an intent's begin");
                None
            }
        }
    }

    /// A keyed intent looks for the key's stored intent first; a new one
    /// takes its place (when scoped) and is written (when keyed or scoped).
    fn begin_now(&mut self, me: TaskId, b: &mut Begin) -> Ended {
        if b.key.is_some() {
            let id = b.record.request_id.clone();
            self.find(me, &id, false);
            b.stage = BeginStage::Existing;
            return None;
        }
        self.begin_new(me, b)
    }

    /// A new intent: its aggregate's id checked, then placed and written.
    fn begin_new(&mut self, me: TaskId, b: &mut Begin) -> Ended {
        match b.record.aggregate.check_id(b.record.command.create) {
            Ok(()) => self.place_or_write(me, b, false),
            Err(e) => Some(Err(journal_failure(e))),
        }
    }

    /// What its key's record (or its id's) holds already: a replay, a
    /// resend of one refused before the bus, or a new intent.
    fn existing(
        &mut self,
        me: TaskId,
        b: &mut Begin,
        found: Result<Option<IntentRecord>, JournalError>,
    ) -> Ended {
        match found {
            Ok(Some(existing)) => {
                let key = b.key.clone().unwrap_or_default();
                match replay(&key, existing, &b.fingerprint) {
                    Ok(Begun::Settled(r)) if r.refused_before_the_bus() => {
                        b.record = sent_again(r, b.record.scope.clone());
                        self.place_or_write(me, b, true)
                    }
                    begun => Some(begun.map_err(journal_failure)),
                }
            }
            Ok(None) => self.begin_new(me, b),
            Err(e) => Some(Err(journal_failure(e))),
        }
    }

    /// Its record was written (or not).
    fn wrote(
        &mut self,
        me: TaskId,
        b: &mut Begin,
        resent: bool,
        written: Result<u64, StoreError>,
    ) -> Ended {
        match written {
            Ok(revision) => {
                b.record.set_revision(revision);
                self.watch_write(b.call, b.record.clone());
                let record = b.record.clone();
                Some(Ok(if resent {
                    Begun::Unresolved(record)
                } else {
                    Begun::Created(record)
                }))
            }
            // Another tab began the same key at the same moment: theirs wins.
            Err(StoreError::Conflict { .. }) => {
                let id = b.record.intent_id.clone();
                self.find(me, &id, false);
                b.stage = BeginStage::Reread { resent };
                None
            }
            Err(e) => Some(Err(journal_failure(e.into()))),
        }
    }

    fn place_or_write(&mut self, me: TaskId, b: &mut Begin, resent: bool) -> Ended {
        if b.record.scope.is_some() {
            let line = self.line_at(b.record.scope.as_deref());
            if line.is_some_and(|i| self.lines[i].view.is_some()) {
                return self.place_in_line(me, b, resent);
            }
            self.list(me, b.record.scope.as_deref());
            b.stage = BeginStage::Placing { resent };
            return None;
        }
        self.write_or_not(me, b, resent)
    }

    /// Takes the place after the scope's records read under the line's
    /// hold (and the places taken since), and writes it; the next send in
    /// line takes its own at once.
    fn place_in_line(&mut self, me: TaskId, b: &mut Begin, resent: bool) -> Ended {
        let line = self.line_at(b.record.scope.as_deref());
        if let Some(view) = line.and_then(|i| self.lines[i].view.as_mut()) {
            take_place(&mut b.record, view);
            view.push(b.record.clone());
        }
        let next = self.write_or_not(me, b, resent);
        self.hand_on(me, b.record.scope.as_deref(), true);
        next
    }

    /// A keyless, unscoped intent is not written here but by the machine's
    /// first `Persist` (a compare-and-swap create), which still comes
    /// before the first send: nobody else can know a random requestId
    /// before then. A keyed one is written at once (two tabs may begin the
    /// same key), and so is a scoped one (its place is its first write).
    fn write_or_not(&mut self, me: TaskId, b: &mut Begin, resent: bool) -> Ended {
        // Begun before its user signed out: written now, it would outlive the sign-out.
        if self.signing_out > 0 {
            return Some(Err(signing_out()));
        }
        if b.key.is_none() && b.record.scope.is_none() && !resent {
            return Some(Ok(Begun::Created(b.record.clone())));
        }
        b.record.updated_at = self.now;
        let record = b.record.clone();
        self.write(me, &record);
        b.stage = BeginStage::Writing { resent };
        None
    }
}
