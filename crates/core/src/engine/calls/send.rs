//! `send`, `sendAndWait`, `sendAndWaitStream`: an intent begun (a key's
//! stored intent replayed, a new one placed in its scope and written), its
//! turn in its scope waited for, then its drive, whose outcome the call
//! settles with.

use super::outcomes::{journal_failure, signing_out};
use crate::engine::drive::Locking;
use crate::engine::io::{CallId, Done, Locked, Reply};
use crate::engine::{Child, Engine, TaskId, Wake};
use crate::journal::{
    replay, scope, sent_again, take_place, Begun, IntentRecord, IntentState, JournalError,
    StoreError,
};
use crate::machine::{MachineConfig, Outcome, Status};
use crate::text::text;

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

/// How often a queued intent's caller, next in its scope, looks at its
/// scope again while no announcement came (a runtime without
/// BroadcastChannel hears no other tab).
const TURN_POLL_MS: i64 = 2_000;

/// The same for a queued intent with others between it and the scope's head.
const FAR_TURN_POLL_MS: i64 = 10_000;

/// A send: its intent begun (replayed, placed, written), its turn, its drive.
#[derive(Debug)]
pub(super) struct Send {
    mode: SendMode,
    config: MachineConfig,
    create: bool,
    key: Option<String>,
    /// The intent: new, replayed or sent again.
    record: IntentRecord,
    fingerprint: String,
    stage: SendStage,
}

impl Send {
    /// A send of `record` (`create`, `key` and `fingerprint` as the
    /// caller's command made them), about to begin.
    pub(super) fn new(
        mode: SendMode,
        config: MachineConfig,
        create: bool,
        key: Option<String>,
        record: IntentRecord,
        fingerprint: String,
    ) -> Send {
        Send {
            mode,
            config,
            create,
            key,
            record,
            fingerprint,
            stage: SendStage::Starting,
        }
    }

    /// Its intent's id.
    pub(super) fn intent_id(&self) -> &str {
        &self.record.intent_id
    }
}

#[derive(Debug)]
enum SendStage {
    /// Taking the scope's lock, when scoped.
    Starting,
    /// Reading the key's stored intent.
    Existing,
    /// Reading its scope, to take its place.
    Placing { resent: bool },
    /// Writing the record (a new one, or one sent again).
    Writing { resent: bool },
    /// Another tab wrote it first: reading theirs.
    Reread { resent: bool },
    /// Waiting for its turn in its scope.
    Turn(Turn),
    /// Its drive runs (a child task); the send ends with the drive's outcome.
    Driving,
}

#[derive(Debug)]
struct Turn {
    until: i64,
    stage: TurnStage,
    /// The unsettled intent just before it (whose settling it listens for).
    before: String,
    /// An announcement it listens for came while it was not waiting.
    poked: bool,
}

#[derive(Debug, PartialEq, Eq)]
enum TurnStage {
    Listing,
    Ahead,
    Waiting,
}

impl Engine {
    pub(super) fn step_send(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        wake: Wake,
    ) -> Option<Child> {
        let stage = std::mem::replace(&mut s.stage, SendStage::Driving);
        match (stage, wake) {
            (SendStage::Starting, Wake::Start) if s.record.scope.is_some() => {
                s.stage = SendStage::Starting;
                None
            }
            (SendStage::Starting, Wake::Op(Done::Locked(locked))) => {
                if let Some(i) = self.line_at(s.record.scope.as_deref()) {
                    self.lines[i].locked = Some(locked);
                }
                if locked == Locked::Busy {
                    let why = text!(
                        "scope `",
                        s.record.scope.as_deref().unwrap_or_default(),
                        "` stayed locked by another tab or worker; nothing was sent"
                    );
                    let busy = Outcome::failed("IntentBusy", &why, Status::Unknown, Some(false));
                    return self.send_failed(me, call, s, busy);
                }
                self.begin(me, call, s)
            }
            (SendStage::Starting, Wake::Start) => self.begin(me, call, s),
            (SendStage::Existing, Wake::Child(Child::Record(found))) => {
                self.existing(me, call, s, found)
            }
            (SendStage::Placing { resent }, Wake::Child(Child::Listing(listed))) => match listed {
                Ok(listing) => {
                    if let Some(i) = self.line_at(s.record.scope.as_deref()) {
                        self.lines[i].view = Some(listing.records);
                    }
                    self.place_in_line(me, call, s, resent)
                }
                Err(e) => self.send_failed(me, call, s, journal_failure(e.into())),
            },
            (SendStage::Writing { resent }, Wake::Child(Child::Wrote(written))) => {
                // A scoped intent's write is its place's: stored now.
                self.hand_on(0, s.record.scope.as_deref(), false);
                self.wrote(me, call, s, resent, written)
            }
            (SendStage::Reread { resent }, Wake::Child(Child::Record(found))) => {
                let begun = match (found, resent) {
                    (Ok(Some(now)), true) if now.state.is_settled() => Ok(Begun::Settled(now)),
                    (Ok(Some(now)), true) => Ok(Begun::Unresolved(now)),
                    (Ok(None), true) => Ok(Begun::Unresolved(s.record.clone())),
                    (Ok(Some(existing)), false) => {
                        replay(&s.key.clone().unwrap_or_default(), existing, &s.fingerprint)
                    }
                    (Ok(None), false) => Err(StoreError::Conflict { current: None }.into()),
                    (Err(e), _) => Err(e),
                };
                match begun {
                    Ok(begun) => self.begun(me, call, s, begun),
                    Err(e) => self.send_failed(me, call, s, journal_failure(e)),
                }
            }
            (SendStage::Turn(turn), wake) => self.step_turn(me, call, s, turn, wake),
            (SendStage::Driving, Wake::Child(Child::Drove(outcome))) => {
                let outcome = outcome.with_create_hint(s.create);
                let reply = send_reply(s.mode, outcome);
                self.settle(call, reply);
                Some(Child::Nothing)
            }
            (stage, wake) => {
                self.unasked(&wake, "a send");
                s.stage = stage;
                None
            }
        }
    }

    /// What its key's record (or its id's) holds already: a replay, a
    /// resend of one refused before the bus, or a new intent.
    fn existing(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        found: Result<Option<IntentRecord>, JournalError>,
    ) -> Option<Child> {
        match found {
            Ok(Some(existing)) => {
                let key = s.key.clone().unwrap_or_default();
                match replay(&key, existing, &s.fingerprint) {
                    Ok(Begun::Settled(r)) if r.refused_before_the_bus() => {
                        s.record = sent_again(r, s.record.scope.clone());
                        self.place_or_write(me, call, s, true)
                    }
                    Ok(begun) => self.begun(me, call, s, begun),
                    Err(e) => self.send_failed(me, call, s, journal_failure(e)),
                }
            }
            Ok(None) => match s.record.aggregate.check_id(s.record.command.create) {
                Ok(()) => self.place_or_write(me, call, s, false),
                Err(e) => self.send_failed(me, call, s, journal_failure(e)),
            },
            Err(e) => self.send_failed(me, call, s, journal_failure(e)),
        }
    }

    /// Its record was written (or not).
    fn wrote(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        resent: bool,
        written: Result<u64, StoreError>,
    ) -> Option<Child> {
        match written {
            Ok(revision) => {
                s.record.set_revision(revision);
                self.watch_write(call, s.record.clone());
                let record = s.record.clone();
                let begun = if resent {
                    Begun::Unresolved(record)
                } else {
                    Begun::Created(record)
                };
                self.begun(me, call, s, begun)
            }
            // Another tab began the same key at the same moment: theirs wins.
            Err(StoreError::Conflict { .. }) => {
                let id = s.record.intent_id.clone();
                self.find(me, &id, false);
                s.stage = SendStage::Reread { resent };
                None
            }
            Err(e) => self.send_failed(me, call, s, journal_failure(e.into())),
        }
    }

    /// A keyed intent looks for the key's stored intent first; a new one
    /// takes its place (when scoped) and is written (when keyed or scoped).
    fn begin(&mut self, me: TaskId, call: CallId, s: &mut Send) -> Option<Child> {
        if s.key.is_some() {
            let id = s.record.request_id.clone();
            self.find(me, &id, false);
            s.stage = SendStage::Existing;
            return None;
        }
        match s.record.aggregate.check_id(s.record.command.create) {
            Ok(()) => self.place_or_write(me, call, s, false),
            Err(e) => self.send_failed(me, call, s, journal_failure(e)),
        }
    }

    fn place_or_write(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        resent: bool,
    ) -> Option<Child> {
        if s.record.scope.is_some() {
            let line = self.line_at(s.record.scope.as_deref());
            if line.is_some_and(|i| self.lines[i].view.is_some()) {
                return self.place_in_line(me, call, s, resent);
            }
            self.list(me, s.record.scope.as_deref());
            s.stage = SendStage::Placing { resent };
            return None;
        }
        self.write_or_not(me, call, s, resent)
    }

    /// Takes the place after the scope's records read under the line's
    /// hold (and the places taken since), and writes it; the next send in
    /// line takes its own at once.
    fn place_in_line(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        resent: bool,
    ) -> Option<Child> {
        let line = self.line_at(s.record.scope.as_deref());
        if let Some(view) = line.and_then(|i| self.lines[i].view.as_mut()) {
            take_place(&mut s.record, view);
            view.push(s.record.clone());
        }
        let next = self.write_or_not(me, call, s, resent);
        self.hand_on(me, s.record.scope.as_deref(), true);
        next
    }

    /// A keyless, unscoped intent is not written here but by the machine's
    /// first `Persist` (a compare-and-swap create), which still comes
    /// before the first send: nobody else can know a random requestId
    /// before then. A keyed one is written at once (two tabs may begin the
    /// same key), and so is a scoped one (its place is its first write).
    fn write_or_not(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        resent: bool,
    ) -> Option<Child> {
        // Begun before its user signed out: written now, it would outlive the sign-out.
        if self.signing_out > 0 {
            return self.send_failed(me, call, s, signing_out());
        }
        if s.key.is_none() && s.record.scope.is_none() && !resent {
            let begun = Begun::Created(s.record.clone());
            return self.begun(me, call, s, begun);
        }
        s.record.updated_at = self.now;
        let record = s.record.clone();
        self.write(me, &record);
        s.stage = SendStage::Writing { resent };
        None
    }

    fn begun(&mut self, me: TaskId, call: CallId, s: &mut Send, begun: Begun) -> Option<Child> {
        // Its place taken or not needed: the next send in line takes its own.
        self.hand_on(me, s.record.scope.as_deref(), false);
        let record = match begun {
            Begun::Settled(record) => {
                let outcome = Outcome::from_record(&record).with_create_hint(s.create);
                let reply = send_reply(s.mode, outcome);
                self.settle(call, reply);
                return Some(Child::Nothing);
            }
            Begun::Created(r) | Begun::Unresolved(r) => r,
        };
        if record.state == IntentState::Queued {
            self.announce(&record, record.revision);
        }
        s.record = record;
        if s.record.scope.is_some() {
            return self.enter_turn(me, call, s);
        }
        self.drive_send(me, call, s)
    }

    /// Drives the send's intent under its lock.
    fn drive_send(&mut self, me: TaskId, call: CallId, s: &mut Send) -> Option<Child> {
        let emit = s.mode == SendMode::Stream;
        let (record, config) = (s.record.clone(), s.config.clone());
        self.drive(me, call, emit, record, config, Locking::Ask);
        s.stage = SendStage::Driving;
        None
    }

    fn send_failed(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        outcome: Outcome,
    ) -> Option<Child> {
        self.hand_on(me, s.record.scope.as_deref(), false);
        self.settle(call, Reply::Failed(Box::new(outcome)));
        Some(Child::Nothing)
    }

    /// A scoped intent is sent in its turn: while an earlier intent of its
    /// scope is unsettled it stays `queued`, and the caller waits, up to its
    /// timeout, for that one to change. An earlier one that nobody drives
    /// (its tab was closed) is driven here. When the caller's wait ends
    /// first, the outcome says nothing was sent, and the intent is sent in
    /// its turn by whoever settles the one before it.
    fn enter_turn(&mut self, me: TaskId, call: CallId, s: &mut Send) -> Option<Child> {
        let id = s.record.intent_id.clone();
        self.waited_here.push(id.clone());
        self.waiting_scopes
            .push(s.record.scope.clone().unwrap_or_default());
        self.listen(me, [id.clone(), id]);
        if s.record.state == IntentState::Queued {
            // An abort while it waits says what was written: its ids, nothing sent.
            self.watch_write(call, s.record.clone());
        }
        let mut turn = Turn {
            until: self.now.saturating_add(s.config.caller_timeout_ms as i64),
            stage: TurnStage::Listing,
            before: String::new(),
            poked: false,
        };
        // The one it waits for waits here too (a burst into one scope): its
        // settling, or its caller giving up, is heard here, so the scope
        // need not be read again until then.
        let waits_for = s.record.waits_for.as_ref();
        if let Some(before) = waits_for.filter(|b| self.waited_here.contains(b)) {
            turn.before = before.clone();
            let own = s.record.intent_id.clone();
            self.listen(me, [turn.before.clone(), own]);
            return self.turn_wait(me, call, s, turn, false);
        }
        self.turn_look(me, call, s, turn)
    }

    /// Looks at the scope again, unless its turn has come.
    fn turn_look(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        mut turn: Turn,
    ) -> Option<Child> {
        if s.record.state != IntentState::Queued {
            return self.turn_over(me, call, s, false);
        }
        let scope = s.record.scope.clone().unwrap_or_default();
        self.list(me, Some(&scope));
        turn.stage = TurnStage::Listing;
        s.stage = SendStage::Turn(turn);
        None
    }

    fn step_turn(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        mut turn: Turn,
        wake: Wake,
    ) -> Option<Child> {
        match (&turn.stage, wake) {
            (TurnStage::Listing, Wake::Child(Child::Listing(listed))) => {
                // Never a guess: a journal that cannot say whose turn it is sends nothing.
                let Ok(listing) = listed else {
                    return self.turn_over(me, call, s, true);
                };
                let records = listing.records;
                // Its own record as stored now (withdrawn, or sent by another tab meanwhile).
                match records.iter().find(|r| r.intent_id == s.record.intent_id) {
                    Some(fresh) => s.record = fresh.clone(),
                    None => return self.turn_over(me, call, s, true),
                }
                if s.record.state != IntentState::Queued {
                    return self.turn_over(me, call, s, false);
                }
                let Some(head) = scope::ahead_of(&records, &s.record) else {
                    return self.turn_over(me, call, s, false);
                };
                let before = scope::just_before(&records, &s.record).unwrap_or(head);
                turn.before = before.intent_id.clone();
                self.listen(me, [turn.before.clone(), s.record.intent_id.clone()]);
                let drivable = matches!(
                    head.state,
                    IntentState::Pending
                        | IntentState::Sending
                        | IntentState::Unknown
                        | IntentState::Queued
                );
                let next = turn.before == head.intent_id;
                if drivable && !self.waited_here.contains(&head.intent_id) {
                    // Driven here only when no one holds it; never without Web Locks.
                    let head = head.clone();
                    self.resume_one(me, head, true, 0);
                    turn.stage = TurnStage::Ahead;
                    s.stage = SendStage::Turn(turn);
                    return None;
                }
                self.turn_wait(me, call, s, turn, next)
            }
            (TurnStage::Ahead, Wake::Child(Child::Resumed(..))) => {
                self.turn_wait(me, call, s, turn, true)
            }
            // Its turn came: the drive reads its record again under its lock.
            (TurnStage::Waiting, Wake::Poke(true)) => self.turn_over(me, call, s, false),
            (TurnStage::Waiting, Wake::Timer | Wake::Poke(_)) => {
                // Woken early (a poke), its poll's timer goes: it lists now.
                self.untime(me);
                self.turn_look(me, call, s, turn)
            }
            (_, Wake::Poke(_)) => {
                turn.poked = true;
                s.stage = SendStage::Turn(turn);
                None
            }
            (_, wake) => {
                self.unasked(&wake, "a scope's turn");
                s.stage = SendStage::Turn(turn);
                None
            }
        }
    }

    /// Waits for the one just before it (or its own withdrawal), or polls:
    /// a burst in one scope wakes one waiter per settled intent, not all;
    /// the time bounds the wait where no announcement comes, longer for
    /// those further back.
    fn turn_wait(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        mut turn: Turn,
        next: bool,
    ) -> Option<Child> {
        let left = turn.until - self.now;
        let gone = self.watched.iter().any(|w| w.call == call && w.left);
        if left <= 0 || gone {
            return self.turn_over(me, call, s, true);
        }
        if std::mem::take(&mut turn.poked) {
            return self.turn_look(me, call, s, turn);
        }
        let poll = if next { TURN_POLL_MS } else { FAR_TURN_POLL_MS };
        self.timer(me, self.now + left.min(poll));
        turn.stage = TurnStage::Waiting;
        s.stage = SendStage::Turn(turn);
        None
    }

    /// Its turn came (`gave_up` false: driven now), or the caller's wait ended.
    fn turn_over(
        &mut self,
        me: TaskId,
        call: CallId,
        s: &mut Send,
        gave_up: bool,
    ) -> Option<Child> {
        let id = s.record.intent_id.clone();
        if let Some(i) = self.waited_here.iter().position(|w| *w == id) {
            self.waited_here.swap_remove(i);
        }
        let scope = s.record.scope.clone().unwrap_or_default();
        if let Some(i) = self.waiting_scopes.iter().position(|w| *w == scope) {
            self.waiting_scopes.swap_remove(i);
        }
        self.unlisten(me);
        self.untime(me);
        if gave_up {
            // The one waiting behind it looks at the scope now: nobody
            // here drives this one any more.
            self.hear(&id, true, false);
            // The one before it may have settled just now, while this
            // caller still counted as its driver: look once more.
            if let Some(scope) = s.record.scope.clone() {
                self.advance_scope(scope);
            }
            let outcome = Outcome::from_record(&s.record).with_create_hint(s.create);
            self.settle(call, send_reply(s.mode, outcome));
            return Some(Child::Nothing);
        }
        self.drive_send(me, call, s)
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
