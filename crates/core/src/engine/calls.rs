//! The public calls, each a task: `send` (its place in its scope, its
//! begin, its turn, its drive), `resume`, `confirm`, `retry`, `withdraw`,
//! `withdrawScope`, the journal's reads, `awaitDownstream`; and what the
//! engine does by itself: the next intent of a scope once the one before
//! it settles, the probe's look for what waits at rest, the drive of what
//! waited once history answers.

use super::drive::{lock_name, Locking};
use super::io::{Ask, CallId, Do, Done, Io, LockKind, OpId, Reply};
use super::{Child, Engine, Next, Resumed, Step, TaskId, Wake, Watched};
use crate::journal::{
    new_record, prunable, redecided, replay, scope, sent_again, take_place, withdrawal,
    withdrawal_refused, Begun, IntentRecord, IntentState, JournalError, NewIntent, StoreError,
};
use crate::machine::outcome::error_info;
use crate::machine::{MachineConfig, Outcome, Status};
use crate::protocol::{CommandStage, ErrorCode, JsonValue};
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

/// How many unresolved intents `resume()` drives at once: a journal left
/// with hundreds is finished in windows of this many.
const RESUME_WINDOW: usize = 16;

/// A call (or the engine's own work) in progress.
#[derive(Debug)]
pub(super) struct CallTask {
    /// The call it settles (0: nobody's).
    call: CallId,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Send(Box<Send>),
    Resume(Resume),
    Person(Person),
    Withdraw(Withdraw),
    Read(Reading),
    Advance,
    Escalated,
    Downstream(Box<Downstream>),
    Purge(Box<Purge>),
}

impl Step for CallTask {
    fn step(self: Box<Self>, engine: &mut Engine, me: TaskId, wake: Wake) -> Next {
        engine.step_call(me, self, wake)
    }

    /// The intent it handles: a send's, or one resumed.
    fn intent_id(&self) -> Option<&str> {
        match &self.kind {
            Kind::Send(s) => Some(&s.record.intent_id),
            _ => None,
        }
    }
}

impl CallTask {
    fn resume(call: CallId, automatic: bool) -> CallTask {
        CallTask {
            call,
            kind: Kind::Resume(Resume {
                automatic,
                records: Vec::new(),
                next: 0,
                results: Vec::new(),
                running: 0,
            }),
        }
    }
}

// ---------------------------------------------------------------- public calls

impl Engine {
    /// Call `call`'s caller stopped waiting (its signal aborted): the call
    /// settles at once with `Aborted`, saying what was written; the intent
    /// is not withdrawn, and its drive goes on.
    pub fn caller_left(&mut self, now: i64, call: CallId) {
        self.now = now;
        let Some(w) = self.watched.iter_mut().find(|w| w.call == call) else {
            return;
        };
        if w.left {
            return;
        }
        w.left = true;
        let outcome = aborted(w.record.as_ref(), w.sent);
        self.io.push_back(Io {
            op: OpId::NONE,
            what: Do::Settle(call, Reply::Failed(Box::new(outcome))),
        });
        // A queued caller's wait ends with it.
        for (task, _) in &self.listening {
            self.wakes.push_back((*task, Wake::Poke(false)));
        }
        self.run();
    }

    /// The engine's own resume of what waited once history answers
    /// ([`ProbeAction::DriveEscalated`](crate::machine::ProbeAction)).
    pub(super) fn resume_escalated(&mut self) {
        self.spawn(None, Box::new(CallTask::resume(0, true)));
    }

    /// `send`, `sendAndWait`, `sendAndWaitStream`: `intent` as the caller's
    /// command made it, driven with `config`. `watched`: the caller may
    /// leave (a signal) or wants its intent's id (`onIntent`).
    pub fn send(
        &mut self,
        now: i64,
        call: CallId,
        intent: NewIntent,
        config: MachineConfig,
        mode: SendMode,
        watched: bool,
    ) {
        self.now = now;
        self.watch(call, watched);
        let key = intent.intent_key.clone();
        let create = intent.command.create;
        let ns = self.config.namespace.clone();
        let made = new_record(
            &ns,
            self.config.policy,
            self.float,
            now,
            intent,
            &mut *self.random,
        );
        let (mut record, fingerprint) = match made {
            Ok(made) => made,
            Err(e) => return self.fail_now(call, journal_failure(e)),
        };
        record.user = self.config.user.clone();
        let scope = record.scope.clone();
        let send = Box::new(Send {
            mode,
            config,
            create,
            key,
            record,
            fingerprint,
            stage: SendStage::Starting,
        });
        let me = self.spawn(
            None,
            Box::new(CallTask {
                call,
                kind: Kind::Send(send),
            }),
        );
        // A scoped intent takes its place under the scope's lock, so two
        // tabs writing at the same moment agree on the order.
        if let Some(scope) = scope {
            self.join_line(me, &scope);
        }
        self.run();
    }

    /// `resume()`: drives every unresolved intent of the namespace, each
    /// under its lock (`automatic`: only where there are locks, never racing).
    pub fn resume(&mut self, now: i64, call: CallId, automatic: bool) {
        self.now = now;
        if call != 0 {
            self.probe.wake(now);
        }
        self.spawn(None, Box::new(CallTask::resume(call, automatic)));
        self.run();
    }

    /// `confirm(intent)`: asks history about one intent now and records the
    /// answer; never sends it.
    pub fn confirm(&mut self, now: i64, call: CallId, intent: &str, watched: bool) {
        self.start_person(now, call, intent, PersonAsks::Confirm, watched);
    }

    /// `retry(intent, { expectedVersion })`: a conflict re-decided by the caller.
    pub fn retry(
        &mut self,
        now: i64,
        call: CallId,
        intent: &str,
        expected: Option<i64>,
        watched: bool,
    ) {
        self.start_person(now, call, intent, PersonAsks::Retry(expected), watched);
    }

    fn start_person(
        &mut self,
        now: i64,
        call: CallId,
        intent: &str,
        asked: PersonAsks,
        watched: bool,
    ) {
        self.now = now;
        self.watch(call, watched);
        let kind = Kind::Person(Person {
            asked,
            intent: intent.to_owned(),
            stage: PersonStage::Finding,
        });
        let me = self.new_id();
        self.add(me, None, Some(Box::new(CallTask { call, kind })));
        self.find(me, intent, true);
        self.run();
    }

    /// `withdraw(intent)`, or `withdrawScope(scope)` (`scope`: true).
    pub fn withdraw(&mut self, now: i64, call: CallId, target: &str, scope: bool) {
        self.now = now;
        let me = self.new_id();
        let kind = Kind::Withdraw(Withdraw {
            scope: scope.then(|| target.to_owned()),
            queue: Vec::new(),
            target: target.to_owned(),
            record: None,
            withdrawn: Vec::new(),
        });
        self.add(me, None, Some(Box::new(CallTask { call, kind })));
        if scope {
            self.list(me, Some(target));
        } else {
            self.find(me, target, true);
        }
        self.run();
    }

    /// The journal's reads: one intent, every intent, the quarantine, and
    /// pruning and clearing; `connect`'s first look at the store.
    pub fn read(&mut self, now: i64, call: CallId, read: Read) {
        self.now = now;
        let me = self.new_id();
        // One intent's read, or setting one aside, starts from its id; the others list.
        let id = match &read {
            Read::Intent(id) | Read::SetAside(id) => Some(id.clone()),
            _ => None,
        };
        let aside = matches!(read, Read::SetAside(_));
        // A read that hands out no records (or only those to remove) keeps no others.
        let keep = match read {
            Read::Quarantined | Read::Connect => super::store::Keep::Nothing,
            Read::Prune => super::store::Keep::Prunable,
            _ => super::store::Keep::All,
        };
        self.add(
            me,
            None,
            Some(Box::new(CallTask {
                call,
                kind: Kind::Read(Reading {
                    read,
                    left: Vec::new(),
                    removed: 0,
                }),
            })),
        );
        match id {
            Some(id) if aside => self.set_aside(me, &id),
            Some(id) => self.find(me, &id, true),
            None => self.list_keeping(me, keep),
        }
        self.run();
    }

    /// `awaitDownstream(intent, options)`: waits, without sending anything,
    /// for `stage` (the intent's wait stage when none) of an intent
    /// confirmed appended, up to `timeout_ms` (the connect option when none);
    /// `check`: the call has its own check function.
    pub fn downstream(
        &mut self,
        now: i64,
        call: CallId,
        intent: &str,
        stage: Option<CommandStage>,
        timeout_ms: Option<u64>,
        check: bool,
    ) {
        self.now = now;
        let d = Downstream {
            stage,
            timeout_ms: timeout_ms.unwrap_or(self.config.machine.caller_timeout_ms),
            check: check || self.config.check_downstream,
            record: None,
            outcome: None,
            until: 0,
            pause: 100,
            reached: false,
        };
        let me = self.new_id();
        let kind = Kind::Downstream(Box::new(d));
        self.add(me, None, Some(Box::new(CallTask { call, kind })));
        self.find(me, intent, true);
        self.run();
    }

    /// `signOut` (`close`: the client is done after it), `clear()`
    /// (`purge`, the client kept) and `adopt()` (`adopt`). Sign-out: this
    /// client's drives stop; the user's settled intents are removed and its
    /// unresolved ones kept (parked: nobody drives them until the user
    /// connects again), or with `purge` removed too, each once its lock is
    /// held (so no tab sends it meanwhile; one another tab drives is left)
    /// and reported. With `purge`, once nothing of anyone is left in the
    /// namespace, its quarantined entries go too, and on `close` the store
    /// itself (IndexedDB's database). Adopt: the intents made with no user
    /// (by builds before users, or a client with `user: null`) become this
    /// user's, each under its lock.
    pub fn sign_out(&mut self, now: i64, call: CallId, purge: bool, close: bool, adopt: bool) {
        self.now = now;
        if adopt && self.config.user.is_none() {
            return self.settle(call, Reply::Count(0));
        }
        if !adopt {
            self.stop_drives(if purge {
                "stopped: the user's intents were removed from this device"
            } else {
                "stopped: the user signed out; the intent is kept for their next sign-in"
            });
        }
        let kind = Kind::Purge(Box::new(Purge {
            purge,
            close,
            adopt,
            records: Vec::new(),
            locks: Vec::new(),
            asked: OpId::NONE,
            waiting: 0,
            stage: PurgeStage::Listing,
            report: super::io::SignOutReport::default(),
        }));
        let me = self.new_id();
        self.add(me, None, Some(Box::new(CallTask { call, kind })));
        if adopt {
            self.list_unowned(me);
        } else {
            self.list(me, None);
        }
        self.run();
    }

    /// Call `call` fails at once with a `TypeError` saying `why` (a mistake
    /// in its arguments: nothing written).
    pub fn refuse(&mut self, now: i64, call: CallId, why: String) {
        self.now = now;
        self.settle(call, Reply::Mistake(why));
    }

    /// Call `call` fails at once with a `CommandError` carrying `outcome`
    /// (a command that cannot be read: nothing written).
    pub fn fail(&mut self, now: i64, call: CallId, outcome: Outcome) {
        self.now = now;
        self.fail_now(call, outcome);
    }

    fn watch(&mut self, call: CallId, watched: bool) {
        if watched && call != 0 {
            self.watched.push(Watched {
                call,
                record: None,
                sent: false,
                left: false,
            });
        }
    }

    /// Settles `call` (once: a call its caller left is settled already).
    fn settle(&mut self, call: CallId, reply: Reply) {
        if call == 0 {
            return;
        }
        let left = match self.watched.iter().position(|w| w.call == call) {
            Some(i) => self.watched.swap_remove(i).left,
            None => false,
        };
        if !left {
            self.tell(Do::Settle(call, reply));
        }
    }

    /// Settles `call` with a `CommandError` carrying `outcome`, before any task.
    fn fail_now(&mut self, call: CallId, outcome: Outcome) {
        self.settle(call, Reply::Failed(Box::new(outcome)));
        self.run();
    }

    /// Sends the next intent of `scope` when its turn has come and no
    /// caller in this client waits to send it itself: under its lock, as
    /// `resume()` does, so one driver sends it across tabs.
    pub(super) fn advance_scope(&mut self, scope: String) {
        // A caller here waits in that scope: it drives what is next, or a
        // head nobody drives (its tab was closed), at its next look.
        if self.waiting_scopes.contains(&scope) {
            return;
        }
        let me = self.new_id();
        self.add(
            me,
            None,
            Some(Box::new(CallTask {
                call: 0,
                kind: Kind::Advance,
            })),
        );
        self.list(me, Some(&scope));
    }

    fn step_call(&mut self, me: TaskId, mut t: Box<CallTask>, wake: Wake) -> Next {
        let call = t.call;
        let done = match &mut t.kind {
            Kind::Send(s) => self.step_send(me, call, s, wake),
            Kind::Resume(r) => self.step_resume(me, call, r, wake),
            Kind::Person(p) => self.step_person(me, call, p, wake),
            Kind::Withdraw(w) => self.step_withdraw(me, call, w, wake),
            Kind::Read(r) => self.step_read(me, call, r, wake),
            Kind::Advance => self.step_advance(me, wake),
            Kind::Escalated => self.step_escalated(wake),
            Kind::Downstream(d) => self.step_downstream(me, call, d, wake),
            Kind::Purge(p) => self.step_purge(me, call, p, wake),
        };
        match done {
            Some(child) => Next::Done(child),
            None => Next::Keep(t),
        }
    }
}

// ---------------------------------------------------------------- send

#[derive(Debug)]
struct Send {
    mode: SendMode,
    config: MachineConfig,
    create: bool,
    key: Option<String>,
    /// The intent: new, replayed or sent again.
    record: IntentRecord,
    fingerprint: String,
    stage: SendStage,
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
    fn step_send(&mut self, me: TaskId, call: CallId, s: &mut Send, wake: Wake) -> Option<Child> {
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
                if locked == super::io::Locked::Busy {
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

    // ------------------------------------------------------------ turn

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

    // ------------------------------------------------------------ resume

    /// Drives unresolved intent `record` under its lock, if it is free,
    /// for `parent`; its result comes back as [`Child::Resumed`].
    fn resume_one(&mut self, parent: TaskId, record: IntentRecord, automatic: bool, index: usize) {
        let config = self.config.machine.clone();
        let locking = Locking::Try { index, automatic };
        self.drive(parent, 0, false, record, config, locking);
    }

    fn step_resume(
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

    fn step_advance(&mut self, me: TaskId, wake: Wake) -> Option<Child> {
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

    /// The probe's look for what waits on it at rest: the journal's
    /// escalated intents, asked about together.
    pub(super) fn look_for_escalated(&mut self) {
        let me = self.new_id();
        self.add(
            me,
            None,
            Some(Box::new(CallTask {
                call: 0,
                kind: Kind::Escalated,
            })),
        );
        self.list(me, None);
    }

    fn step_escalated(&mut self, wake: Wake) -> Option<Child> {
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

#[derive(Debug)]
struct Resume {
    automatic: bool,
    /// The unresolved intents as listed (each read again under its lock).
    records: Vec<IntentRecord>,
    next: usize,
    results: Vec<Option<Resumed>>,
    running: usize,
}

// ---------------------------------------------------------------- confirm, retry

#[derive(Debug)]
struct Person {
    asked: PersonAsks,
    intent: String,
    stage: PersonStage,
}

/// What a person asked of one intent.
#[derive(Clone, Copy, Debug)]
enum PersonAsks {
    /// `confirm`: history's word on it now.
    Confirm,
    /// `retry`: a conflict re-decided, at this expected version (`None`: any).
    Retry(Option<i64>),
}

#[derive(Debug)]
enum PersonStage {
    Finding,
    Writing(Box<IntentRecord>),
    Driving,
}

impl Engine {
    fn step_person(
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
                let record = match (unseen_if_theirs(found), p.asked) {
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
                    PersonAsks::Retry(expected) => match redecided(record, expected) {
                        Ok(mut record) => {
                            record.updated_at = self.now;
                            self.write(me, &record);
                            p.stage = PersonStage::Writing(Box::new(record));
                            None
                        }
                        Err(e) => failed(self, journal_failure(e)),
                    },
                }
            }
            (PersonStage::Writing(mut record), Wake::Child(Child::Wrote(written))) => match written
            {
                Ok(revision) => {
                    record.set_revision(revision);
                    let config = self.config.machine.clone();
                    self.drive(me, call, false, *record, config, Locking::Ask);
                    None
                }
                Err(e) => failed(self, journal_failure(e.into())),
            },
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

// ---------------------------------------------------------------- withdraw

#[derive(Debug)]
struct Withdraw {
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
    fn step_withdraw(
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

// ---------------------------------------------------------------- sign-out, adopt

#[derive(Debug)]
struct Purge {
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
    report: super::io::SignOutReport,
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
    fn step_purge(&mut self, me: TaskId, call: CallId, p: &mut Purge, wake: Wake) -> Option<Child> {
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
                    super::io::Locked::Held => Some(p.asked),
                    super::io::Locked::Unsupported => Some(OpId::NONE),
                    super::io::Locked::Busy => {
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

    fn purge_over(&mut self, call: CallId, p: &mut Purge) -> Option<Child> {
        let report = std::mem::take(&mut p.report);
        self.settle(call, Reply::SignedOut(Box::new(report)));
        if p.close {
            self.tell(Do::Close);
        }
        Some(Child::Nothing)
    }
}

// ---------------------------------------------------------------- reads

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
struct Reading {
    read: Read,
    /// The ids prune has still to remove.
    left: Vec<String>,
    /// How many prune removes in all.
    removed: u32,
}

impl Engine {
    fn step_read(
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
pub(crate) const PRUNE_BATCH: usize = 500;

impl Engine {
    /// Removes the next batch of what prune removes.
    fn prune_next(&mut self, me: TaskId, r: &mut Reading) -> Option<Child> {
        let batch: Vec<String> = r.left.drain(..r.left.len().min(PRUNE_BATCH)).collect();
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        self.remove(me, &refs);
        None
    }
}

// ---------------------------------------------------------------- awaitDownstream

#[derive(Debug)]
struct Downstream {
    stage: Option<CommandStage>,
    timeout_ms: u64,
    check: bool,
    record: Option<Box<IntentRecord>>,
    outcome: Option<Box<Outcome>>,
    until: i64,
    pause: i64,
    reached: bool,
}

impl Engine {
    /// Polls until the stage is reached or the wait is over: the snapshot
    /// until its version reaches the appended one (SNAPSHOT), or else the
    /// application's check; a failed read or check is "not yet", and the
    /// caller's headers go with each snapshot read.
    fn step_downstream(
        &mut self,
        me: TaskId,
        call: CallId,
        d: &mut Downstream,
        wake: Wake,
    ) -> Option<Child> {
        match wake {
            Wake::Child(Child::Record(found)) => {
                let record = match unseen_if_theirs(found) {
                    Ok(Some(r)) => r,
                    Ok(None) => {
                        return self.downstream_settle(call, Reply::Failed(Box::new(no_intent(""))))
                    }
                    Err(e) => {
                        return self
                            .downstream_settle(call, Reply::Failed(Box::new(journal_failure(e))))
                    }
                };
                let mut outcome = Outcome::from_record(&record);
                // Kept from history's answer, or from the last answer at PROCESSED or later.
                outcome.appended_version = outcome.appended_version.or_else(|| {
                    record
                        .last_result
                        .as_ref()
                        .filter(|r| r.is_succeeded() && r.stage >= CommandStage::Processed)
                        .and_then(|r| r.aggregate_version)
                });
                if outcome.status != Status::Succeeded {
                    let why = text!(
                        "intent `",
                        outcome.intent_id,
                        "` is ",
                        outcome.status.as_str(),
                        ", not confirmed appended: awaitDownstream waits only for what was appended"
                    );
                    return self.downstream_settle(call, Reply::Failed(Box::new(invalid(&why))));
                }
                let stage = d.stage.unwrap_or(record.command.wait.stage);
                d.stage = Some(stage);
                if stage > CommandStage::Snapshot && !d.check {
                    let why = text!(
                        stage.as_str(),
                        " needs a `check` function (or the `checkDownstream` connect option)"
                    );
                    return self.downstream_settle(call, Reply::Mistake(why));
                }
                // Appended is PROCESSED.
                d.reached = stage <= CommandStage::Processed;
                d.until = self.now.saturating_add(d.timeout_ms as i64);
                d.record = Some(Box::new(record));
                d.outcome = Some(Box::new(outcome));
                self.downstream_look(me, call, d)
            }
            Wake::Op(done) => {
                d.reached = match done {
                    Done::Checked(reached) => reached,
                    Done::Answered {
                        status,
                        body: Ok(body),
                        ..
                    } if (200..300).contains(&status) => {
                        let version = d.outcome.as_ref().and_then(|o| o.appended_version);
                        let got = body.get("version").and_then(JsonValue::as_i64);
                        matches!((got, version), (Some(got), Some(want)) if got >= want)
                    }
                    Done::Headers(Ok(extra)) => return self.downstream_read(me, d, &extra),
                    // Refused, failed, lost or unreadable: not reached yet, looked at again.
                    Done::Answered { .. } | Done::Failed(_) | Done::Headers(Err(_)) => false,
                    other => {
                        self.unasked(&Wake::Op(other), "downstream");
                        return None;
                    }
                };
                self.downstream_pause(me, call, d)
            }
            Wake::Timer => self.downstream_look(me, call, d),
            wake => {
                self.unasked(&wake, "downstream");
                None
            }
        }
    }

    /// One look at the stage (unless reached already).
    fn downstream_look(&mut self, me: TaskId, call: CallId, d: &mut Downstream) -> Option<Child> {
        if d.reached {
            return self.downstream_over(call, d);
        }
        let stage = d.stage.unwrap_or(CommandStage::Snapshot);
        if stage == CommandStage::Snapshot {
            if d.outcome
                .as_ref()
                .and_then(|o| o.appended_version)
                .is_none()
            {
                return self.downstream_pause(me, call, d);
            }
            if self.config.headers {
                let id = d
                    .outcome
                    .as_ref()
                    .map(|o| o.intent_id.clone())
                    .unwrap_or_default();
                let ask = self.headers_for("snapshot", &[id.as_str()]);
                self.op(me, ask);
                return None;
            }
            return self.downstream_read(me, d, &[]);
        }
        let question = self.downstream_question(d, stage);
        self.op(me, Do::Ask(Ask::Downstream { call, question }));
        None
    }

    fn downstream_read(
        &mut self,
        me: TaskId,
        d: &mut Downstream,
        extra: &[(String, String)],
    ) -> Option<Child> {
        let within = (d.until - self.now).max(1);
        let request = d.record.as_deref().and_then(|r| {
            super::requests::snapshot(
                &self.config.base_url,
                r,
                extra,
                u32::try_from(within).unwrap_or(u32::MAX),
            )
        });
        match request {
            Some(request) => {
                self.op(me, Do::Fetch(request));
                None
            }
            None => {
                self.timer(me, self.now + d.pause.min(within));
                None
            }
        }
    }

    fn downstream_pause(&mut self, me: TaskId, call: CallId, d: &mut Downstream) -> Option<Child> {
        let left = d.until - self.now;
        if d.reached || left <= 0 {
            return self.downstream_over(call, d);
        }
        self.timer(me, self.now + d.pause.min(left));
        d.pause = (d.pause * 2).min(2_000);
        None
    }

    fn downstream_over(&mut self, call: CallId, d: &mut Downstream) -> Option<Child> {
        let stage = d.stage.unwrap_or(CommandStage::Snapshot);
        let mut outcome = d
            .outcome
            .take()
            .map(|o| *o)
            .unwrap_or_else(|| no_intent(""));
        if d.reached {
            outcome.downstream_pending = None;
        } else {
            outcome.downstream_pending = Some(stage);
            outcome.reason = Some(text!(
                stage.as_str(),
                " not reached in time; the command stays appended"
            ));
        }
        let reached = d.reached.then_some(stage);
        self.downstream_settle(call, Reply::Downstream(Box::new(outcome), reached))
    }

    fn downstream_settle(&mut self, call: CallId, reply: Reply) -> Option<Child> {
        self.settle(call, reply);
        Some(Child::Nothing)
    }

    /// `check`'s question: the stage, the intent's ids, its aggregate and
    /// the appended version.
    fn downstream_question(&self, d: &Downstream, stage: CommandStage) -> JsonValue {
        let text = |s: &str| JsonValue::String(s.to_owned());
        let mut q = vec![("stage".to_owned(), text(stage.as_str()))];
        if let (Some(o), Some(r)) = (&d.outcome, &d.record) {
            q.push(("intentId".into(), text(&o.intent_id)));
            q.push(("requestId".into(), text(&o.request_id)));
            let a = &r.aggregate;
            for (k, v) in [
                ("contextAlias", &a.context_alias),
                ("tenantId", &a.tenant_id),
                ("ownerId", &a.owner_id),
            ] {
                if let Some(v) = v {
                    q.push((k.into(), text(v)));
                }
            }
            q.push(("resource".into(), text(&a.resource)));
            q.push(("aggregateId".into(), text(&a.aggregate_id)));
            q.push((
                "version".into(),
                o.appended_version.map_or(JsonValue::Null, JsonValue::Int),
            ));
        }
        q.push((
            "user".into(),
            self.config.user.as_deref().map_or(JsonValue::Null, text),
        ));
        JsonValue::Object(q)
    }
}

// ---------------------------------------------------------------- outcomes

/// Another user's intent, found by a call that names an intent: answered
/// as an id this journal does not hold (nothing of it is told).
fn unseen_if_theirs(
    found: Result<Option<IntentRecord>, JournalError>,
) -> Result<Option<IntentRecord>, JournalError> {
    match found {
        Err(JournalError::OfAnotherUser) => Ok(None),
        found => found,
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

/// `InvalidCommand`: a call the journal cannot act on.
pub fn invalid(message: &str) -> Outcome {
    Outcome::failed("InvalidCommand", message, Status::Rejected, Some(false))
}

fn no_intent(id: &str) -> Outcome {
    invalid(&text!("no intent `", id, "` in this namespace"))
}

/// A journal failure as the outcome its `CommandError` carries.
pub fn journal_failure(e: JournalError) -> Outcome {
    let (code, status) = match &e {
        JournalError::Storage(StoreError::Unavailable { .. }) => {
            ("StorageUnavailable", Status::Unknown)
        }
        JournalError::Storage(StoreError::Conflict { .. }) => ("IntentBusy", Status::Unknown),
        JournalError::IntentKeyReused { .. } => ("IntentKeyReused", Status::Rejected),
        JournalError::MissingAggregateId => ("InvalidCommand", Status::Rejected),
        JournalError::NotInConflict { .. } => ("NotInConflict", Status::Rejected),
        JournalError::NotWithdrawable { .. } => ("NotWithdrawable", Status::Rejected),
        JournalError::OfAnotherUser => ("IntentOfAnotherUser", Status::Rejected),
    };
    let mut outcome = Outcome::failed(code, &e.message(), status, Some(false));
    if let JournalError::IntentKeyReused {
        intent_key,
        request_id,
    } = e
    {
        outcome.intent_key = Some(intent_key);
        outcome.request_id = request_id.clone();
        outcome.intent_id = request_id;
        outcome.appended = None;
    }
    outcome
}

/// The `Aborted` error of a caller that left: what its drive wrote last,
/// with `appended: false` while no request can have left.
pub(super) fn aborted(record: Option<&IntentRecord>, sent: bool) -> Outcome {
    let mut outcome = match record {
        Some(r) => Outcome::from_record(r),
        None => Outcome::failed("Aborted", "", Status::Unknown, None),
    };
    outcome.status = Status::Unknown;
    outcome.appended = if sent { None } else { Some(false) };
    outcome.downstream_pending = None;
    outcome.appended_version = None;
    outcome.appended_command_id = None;
    outcome.error = Some(error_info(
        ErrorCode::Other("Aborted".into()),
        "the caller's wait was aborted",
    ));
    outcome.reason = Some(if sent {
        "aborted: the outcome is not known; the intent is still driven".into()
    } else {
        "aborted before anything was sent; the intent is still driven".into()
    });
    outcome
}
