//! One drive of one intent: its [`IntentMachine`] run against the world,
//! under the intent's lock across tabs. Every write goes to the journal
//! before what it records is done (the requestId before the first byte);
//! every attempt is built here, sent by the executor, and its answer or
//! stage stream fed back element by element; confirmations go to the
//! history probe.
//!
//! The lock: a new intent's (its record not written yet, so nobody else
//! can know it) is asked for at once and collected only after its first
//! write and first send, so its round trip overlaps the gateway's; an
//! existing intent's is held before its record is read again (another tab
//! may have settled it meanwhile). A resume's try (`resume()`, the `online`
//! event, a scope's turn) is a drive too, one that does not wait for the
//! lock and leaves an intent settled or out of its turn: so signing out
//! ends it as it ends every drive. While the runtime is offline nothing is
//! sent or asked; with `offline: "wait"` the drive goes on once it is
//! online again, with a fresh budget.

use super::events::{self, Detail};
use super::io::{CallId, Do, Done, Failure, LockKind, Locked, OpId, Sink};
use super::requests;
use super::{Child, Engine, Next, Resumed, Step, TaskId, Wake};
use crate::journal::{IntentRecord, IntentState};
use crate::machine::{
    Action, ConfirmAnswer, IntentMachine, MachineConfig, Outcome, Status, TransportError,
};
use crate::protocol::headers::traceparent;
use crate::text::text;

/// The intent's lock, for this drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lock {
    /// Asked for (this op) and not collected yet.
    Asked(OpId),
    /// Held by this op, or `None` (no locks here).
    Held(Option<OpId>),
}

#[derive(Debug)]
enum Phase {
    /// Made, not yet stepped: its lock is to be asked for, waited for up
    /// to `wait_ms`; a `new` intent runs without waiting for it.
    Starting { wait_ms: u64, new: bool },
    /// Waiting for the lock before the record is read again.
    Locking,
    /// Reading the record again (under the lock, or back online).
    Fresh,
    /// A resume's try reading the record again under the lock: driven only
    /// if it is still unresolved.
    Looking,
    /// A resumed intent still queued: reading its scope, to drive it only
    /// if its turn has come.
    Scoping,
    /// Waiting for the lock's answer before this action.
    Collecting(Action),
    /// The record is being written.
    Persisting(Box<IntentRecord>),
    /// The caller's headers are asked for attempt `n`.
    Headers(u32),
    /// Attempt `n` is on the wire, due to end at `deadline` (for its URL's sake, `url`).
    Sending { n: u32, deadline: i64, url: String },
    /// History is asked.
    Confirming,
    /// The machine's timer.
    Sleeping,
    /// The runtime is offline: the drive goes on once it is online.
    Offline,
    /// Reading whether an intent never sent was withdrawn meanwhile.
    Withdrawn(Box<Outcome>),
    /// Between steps.
    Running,
}

/// A drive in progress.
#[derive(Debug)]
pub(super) struct DriveTask {
    /// Whose stream elements these are (0: nobody's).
    emit_to: CallId,
    /// Whose watch records what is written (0: nobody's).
    watch: CallId,
    config: MachineConfig,
    machine: IntentMachine,
    lock: Lock,
    phase: Phase,
    was_escalated: bool,
    /// An attempt was sent in this drive.
    sent: bool,
    /// It met an offline runtime.
    offline: bool,
    /// An unsent intent's drive that ended unknown looks whether it was withdrawn.
    check_withdrawn: bool,
    /// A resume's try ([`Locking::Try`]): reported as its `index`.
    resumed: Option<usize>,
    /// That try is the engine's own (the `online` event, a scope's turn).
    automatic: bool,
    /// A retry's re-decision ([`Locking::Retry`]), made on the record read under the lock.
    redecision: Option<Redecision>,
}

/// The expected version a person's `retry` sends a conflicted intent with.
#[derive(Clone, Copy, Debug)]
struct Redecision(Option<i64>);

impl Step for DriveTask {
    fn step(self: Box<Self>, engine: &mut Engine, me: TaskId, wake: Wake) -> Next {
        engine.step_drive(me, self, wake)
    }

    fn intent_id(&self) -> Option<&str> {
        Some(&self.machine.record().intent_id)
    }

    /// The lock it holds or asked for; its caller hears the intent as its
    /// record stands.
    fn stop(&self, why: &str) -> Option<(Option<OpId>, Child)> {
        let lock = match self.lock {
            Lock::Held(lock) => lock,
            Lock::Asked(lock) => Some(lock),
        };
        let outcome = Outcome::from_record(self.machine.record()).because(why);
        Some((lock, self.reported(Resumed::Driven(Box::new(outcome)))))
    }
}

impl DriveTask {
    /// What its parent hears: a drive's outcome, or a resume's report of it.
    fn reported(&self, what: Resumed) -> Child {
        match (self.resumed, what) {
            (Some(index), what) => Child::Resumed(index, what),
            (None, Resumed::Driven(outcome)) => Child::Drove(outcome),
            (None, _) => Child::Nothing,
        }
    }
}

/// How a drive takes its intent's lock.
pub(super) enum Locking {
    /// Asked for now, waiting up to the caller's timeout.
    Ask,
    /// A resume's try: asked for and not waited for (another tab or worker
    /// holding it drives it). The record is read again under it; one
    /// settled meanwhile, or queued behind an unsettled one, is left.
    /// Without Web Locks only an explicit `resume()` (not `automatic`)
    /// drives. Its parent hears [`Child::Resumed`] with `index`.
    Try { index: usize, automatic: bool },
    /// A person's `retry`: asked for and waited for, as `Ask`. The record
    /// read again under it is re-decided at `expected` if it is still in
    /// conflict (its first write is the re-decision's); one another tab
    /// re-decided and settled meanwhile is reported as it stands.
    Retry { expected: Option<i64> },
}

impl Engine {
    /// Drives `record` for `parent`: its outcome comes back as
    /// [`Child::Drove`] ([`Child::Resumed`] for a resume's try). `call`:
    /// the call whose stream elements and watch these are (0: none).
    pub(super) fn drive(
        &mut self,
        parent: TaskId,
        call: CallId,
        emit: bool,
        record: IntentRecord,
        config: MachineConfig,
        locking: Locking,
    ) {
        // A call begun before its user signed out drives nothing during the
        // sign-out (asking for their credentials): the intent is left as it is.
        if self.signing_out > 0 {
            let child = match locking {
                Locking::Try { index, .. } => Child::Resumed(index, Resumed::Nothing),
                Locking::Ask | Locking::Retry { .. } => Child::Drove(Box::new(
                    Outcome::from_record(&record).because(STOPPED_BY_SIGN_OUT),
                )),
            };
            return self.wakes.push_back((parent, Wake::Child(child)));
        }
        let (wait_ms, resumed, redecision) = match locking {
            Locking::Ask => (config.caller_timeout_ms, None, None),
            Locking::Retry { expected } => {
                (config.caller_timeout_ms, None, Some(Redecision(expected)))
            }
            Locking::Try { index, automatic } => (0, Some((index, automatic)), None),
        };
        // A record not yet written (revision 0) is known to nobody else:
        // its drive runs before its lock is collected.
        let new = resumed.is_none() && record.revision == 0;
        let mut d = DriveTask {
            emit_to: if emit { call } else { 0 },
            watch: call,
            was_escalated: false,
            machine: self.machine(record, &config, call),
            config,
            lock: Lock::Held(None),
            phase: Phase::Starting { wait_ms, new },
            sent: false,
            offline: false,
            check_withdrawn: resumed.is_none(),
            resumed: resumed.map(|(index, _)| index),
            automatic: resumed.is_some_and(|(_, automatic)| automatic),
            redecision,
        };
        d.was_escalated = d.machine.record().state == IntentState::Escalated;
        self.start(parent, Box::new(d));
    }

    /// Its first step: it asks for its intent's lock, and runs at once if
    /// its intent is `new` (the lock collected later), else waits for it.
    fn drive_starts(&mut self, me: TaskId, mut d: Box<DriveTask>, wait_ms: u64, new: bool) -> Next {
        let name = lock_name(&self.config.namespace, &d.machine.record().intent_id);
        let kind = LockKind::Intent;
        d.lock = Lock::Asked(self.op(
            me,
            Do::Lock {
                name,
                wait_ms,
                kind,
            },
        ));
        if new {
            return self.advance(me, d, None);
        }
        d.phase = Phase::Locking;
        Next::Keep(d)
    }

    /// A machine for `record`, started.
    fn machine(
        &mut self,
        record: IntentRecord,
        config: &MachineConfig,
        call: CallId,
    ) -> IntentMachine {
        if !record.attempts.is_empty() {
            if let Some(w) = self.watched(call) {
                w.sent = true;
            }
        }
        let mut seed = [0u8; 8];
        self.random.fill(&mut seed);
        let mut machine = IntentMachine::new(record, config.clone(), u64::from_le_bytes(seed));
        machine.start(self.now);
        machine
    }

    fn step_drive(&mut self, me: TaskId, mut d: Box<DriveTask>, wake: Wake) -> Next {
        let now = self.now;
        let phase = std::mem::replace(&mut d.phase, Phase::Running);
        match (phase, wake) {
            (Phase::Starting { wait_ms, new }, Wake::Start) => {
                self.drive_starts(me, d, wait_ms, new)
            }
            // The lock's answer, in whatever phase it comes.
            (phase, Wake::Op(Done::Locked(locked))) => self.locked(me, d, phase, locked),
            (Phase::Looking, Wake::Child(Child::Record(found))) => self.looked(me, d, found),
            (Phase::Scoping, Wake::Child(Child::Listing(listed))) => {
                let ahead = listed.map_or(true, |l| {
                    crate::journal::scope::ahead_of(&l.records, d.machine.record()).is_some()
                });
                if ahead {
                    return self.left_alone(d);
                }
                self.advance(me, d, None)
            }
            (Phase::Fresh, Wake::Child(Child::Record(found))) => self.fresh(me, d, found),
            (Phase::Persisting(record), Wake::Child(Child::Wrote(written))) => {
                if let Ok(revision) = &written {
                    self.announce(&record, *revision);
                    let mut stored = *record;
                    stored.set_revision(*revision);
                    self.watch_write(d.watch, stored);
                }
                d.machine.handle_persisted(now, written);
                self.advance(me, d, None)
            }
            (Phase::Headers(n), Wake::Op(Done::Headers(headers))) => match headers {
                Ok(extra) => self.attempt(me, d, n, extra),
                Err(why) => {
                    let why = text!("headers(): ", why);
                    d.machine
                        .handle_transport_error(now, n, TransportError::NeverSent(why));
                    self.attempt_ended(me, d)
                }
            },
            (Phase::Sending { n, deadline, url }, Wake::Op(done)) => {
                self.answered(me, d, n, deadline, url, done)
            }
            (Phase::Confirming, Wake::Answer(answer)) => {
                let said = match &answer {
                    ConfirmAnswer::Appended { .. } => "appended",
                    ConfirmAnswer::NotAppended => "notAppended",
                    ConfirmAnswer::Unavailable(_) => "unavailable",
                };
                self.event("confirmAnswered", d.machine.record(), Detail::Answer(said));
                d.machine.handle_confirm(now, answer);
                self.advance(me, d, None)
            }
            (Phase::Sleeping, Wake::Timer) => {
                let at = d.machine.poll_timeout().unwrap_or(now);
                d.machine.handle_timeout(now.max(at));
                self.advance(me, d, None)
            }
            (Phase::Offline, Wake::Op(Done::Online)) => {
                // Back online: the record as it is now, and a fresh budget.
                let id = d.machine.record().intent_id.clone();
                d.offline = false;
                self.find(me, &id, false);
                d.phase = Phase::Fresh;
                Next::Keep(d)
            }
            (Phase::Withdrawn(outcome), Wake::Child(Child::Record(found))) => {
                // Withdrawn between the read and the first attempt's write,
                // which lost: the withdrawal is the outcome.
                let outcome = match found {
                    Ok(Some(r)) if r.state == IntentState::Withdrawn => Outcome::from_record(&r),
                    _ => *outcome,
                };
                self.drive_over(d, outcome)
            }
            (phase, wake) => {
                self.unasked(&wake, "a drive");
                d.phase = phase;
                Next::Keep(d)
            }
        }
    }

    /// The record read again under the lock (or back online): an intent
    /// settled meanwhile is reported, not driven twice; a retry's conflict
    /// is re-decided on it.
    fn fresh(
        &mut self,
        me: TaskId,
        mut d: Box<DriveTask>,
        found: Result<Option<IntentRecord>, crate::journal::JournalError>,
    ) -> Next {
        let mut record = match found {
            Ok(Some(fresh)) => fresh,
            _ => d.machine.record().clone(),
        };
        if let Some(Redecision(expected)) = d.redecision.take() {
            // Not in conflict any more (another tab's retry): as it stands.
            let _ = crate::journal::redecide(&mut record, expected);
        }
        d.was_escalated |= record.state == IntentState::Escalated;
        d.machine = self.machine(record, &d.config, d.watch);
        self.advance(me, d, None)
    }

    /// What a resume's try read under the lock: an intent still unresolved
    /// is driven, one still queued once its scope says its turn has come.
    fn looked(
        &mut self,
        me: TaskId,
        mut d: Box<DriveTask>,
        found: Result<Option<IntentRecord>, crate::journal::JournalError>,
    ) -> Next {
        let fresh = match found {
            Ok(Some(fresh)) if fresh.state.is_resumable() => fresh,
            // Settled by another tab meanwhile, or gone: left.
            _ => return self.left_alone(d),
        };
        d.was_escalated = fresh.state == IntentState::Escalated;
        let queued = fresh.state == IntentState::Queued;
        d.machine = self.machine(fresh, &d.config, d.watch);
        if !queued {
            return self.advance(me, d, None);
        }
        // Queued: driven only in its turn (else by the drive that settles
        // the one before it).
        self.list(me, d.machine.record().scope.as_deref());
        d.phase = Phase::Scoping;
        Next::Keep(d)
    }

    /// The intent's lock answered (in whatever phase it comes).
    fn locked(&mut self, me: TaskId, mut d: Box<DriveTask>, phase: Phase, locked: Locked) -> Next {
        let Lock::Asked(op) = d.lock else {
            self.unasked(&Wake::Op(Done::Locked(locked)), "a drive's lock");
            d.phase = phase;
            return Next::Keep(d);
        };
        if locked == Locked::Busy {
            let record = d.machine.record();
            return Next::Done(match d.resumed {
                Some(index) => Child::Resumed(index, Resumed::Busy(record.intent_id.clone())),
                None => Child::Drove(Box::new(busy(record))),
            });
        }
        d.lock = Lock::Held((locked == Locked::Held).then_some(op));
        // Without Web Locks, only an explicit resume() drives: never race.
        if locked == Locked::Unsupported && d.automatic {
            return Next::Done(d.reported(Resumed::Nothing));
        }
        match phase {
            Phase::Locking => {
                let id = d.machine.record().intent_id.clone();
                self.find(me, &id, false);
                d.phase = match d.resumed {
                    Some(_) => Phase::Looking,
                    None => Phase::Fresh,
                };
                Next::Keep(d)
            }
            Phase::Collecting(action) => self.advance(me, d, Some(action)),
            phase => {
                d.phase = phase;
                Next::Keep(d)
            }
        }
    }

    /// Attempt `n`'s request answered (or one element of its stream came).
    fn answered(
        &mut self,
        me: TaskId,
        mut d: Box<DriveTask>,
        n: u32,
        deadline: i64,
        url: String,
        done: Done,
    ) -> Next {
        let now = self.now;
        self.note_left(&mut d);
        match done {
            Done::Element(element) => {
                d.machine.handle_stream_element(n, element);
                while let Some(action) = d.machine.poll_action() {
                    if let Action::Emit(e) = action {
                        self.event("stage", d.machine.record(), Detail::None);
                        if d.emit_to != 0 {
                            self.tell(Do::Emit(d.emit_to, *e));
                        }
                    }
                }
                d.phase = Phase::Sending { n, deadline, url };
                return Next::Keep(d);
            }
            Done::StreamEnded { cut } => d.machine.handle_stream_end(now, n, cut),
            Done::Answered {
                status,
                error_code,
                retry_after,
                body,
            } => {
                let answer = requests::command_answer(status, error_code, body, &url);
                d.machine.handle_response(now, n, answer, retry_after)
            }
            Done::Failed(Failure::Aborted) => d.machine.handle_timeout(now.max(deadline)),
            Done::Failed(Failure::NeverSent(why)) => {
                // A failure names where it went: a wrong baseUrl was "Failed to fetch", nothing more.
                let why = text!(why, " (", url, ")");
                d.machine
                    .handle_transport_error(now, n, TransportError::NeverSent(why))
            }
            Done::Failed(Failure::Lost(why)) => {
                let why = text!(why, " (", url, ")");
                let error = if self.online {
                    TransportError::Lost(why)
                } else {
                    TransportError::Offline(why)
                };
                d.machine.handle_transport_error(now, n, error)
            }
            done => {
                self.unasked(&Wake::Op(done), "a drive's send");
                d.phase = Phase::Sending { n, deadline, url };
                return Next::Keep(d);
            }
        }
        self.attempt_ended(me, d)
    }

    /// Performs the machine's actions (`first` before them) until one
    /// waits on the world, then arms its timer.
    fn advance(&mut self, me: TaskId, mut d: Box<DriveTask>, first: Option<Action>) -> Next {
        let now = self.now;
        let mut next = first;
        while let Some(action) = next.take().or_else(|| d.machine.poll_action()) {
            self.note_left(&mut d);
            let first_steps = match &action {
                Action::Persist(_) => d.machine.record().revision == 0,
                Action::Send { .. } | Action::OpenStream { .. } => !d.sent,
                _ => false,
            };
            if !first_steps && matches!(d.lock, Lock::Asked(_)) {
                d.phase = Phase::Collecting(action);
                return Next::Keep(d);
            }
            match action {
                Action::Persist(record) => {
                    self.write(me, &record);
                    d.phase = Phase::Persisting(record);
                    return Next::Keep(d);
                }
                Action::Send { .. } | Action::OpenStream { .. } | Action::Confirm { .. }
                    if !self.online =>
                {
                    d.offline = true;
                    d.machine.handle_offline(now);
                }
                Action::Send { attempt } | Action::OpenStream { attempt } => {
                    d.sent = true;
                    if self.config.headers {
                        let id = d.machine.record().intent_id.clone();
                        let ask = self.headers_for("command", &[id.as_str()]);
                        self.op(me, ask);
                        d.phase = Phase::Headers(attempt);
                        return Next::Keep(d);
                    }
                    return self.attempt(me, d, attempt, Vec::new());
                }
                Action::Confirm { query, need_facts } => {
                    self.event("confirmAsked", d.machine.record(), Detail::None);
                    let sent = d.machine.record().attempts.last().map_or(0, |a| a.sent_at);
                    let person = d.config.confirm_now;
                    let ticket = self.probe.ask(now, query, need_facts, sent, person);
                    self.questions.push((ticket, me));
                    d.phase = Phase::Confirming;
                    return Next::Keep(d);
                }
                Action::Emit(element) => {
                    if d.emit_to != 0 {
                        self.tell(Do::Emit(d.emit_to, *element));
                    }
                }
                Action::Done(outcome) => {
                    self.event("outcome", d.machine.record(), Detail::None);
                    return self.drive_ended(me, d, *outcome);
                }
            }
        }
        match d.machine.poll_timeout() {
            Some(at) => {
                if let Some(due) = d.machine.retrying_at() {
                    self.event("retryScheduled", d.machine.record(), Detail::RetryAt(due));
                }
                self.timer(me, at);
                d.phase = Phase::Sleeping;
                Next::Keep(d)
            }
            None => {
                // Unreachable by the machine's contract; never hang.
                let outcome = d
                    .machine
                    .outcome()
                    .cloned()
                    .unwrap_or_else(|| Outcome::from_record(d.machine.record()));
                self.drive_ended(me, d, outcome)
            }
        }
    }

    /// Sends attempt `n` with the caller's fresh headers `extra`.
    fn attempt(
        &mut self,
        me: TaskId,
        mut d: Box<DriveTask>,
        n: u32,
        mut extra: Vec<(String, String)>,
    ) -> Next {
        let now = self.now;
        let deadline = d.machine.poll_timeout().unwrap_or(now + 30_000);
        let trace = if self.config.trace_context {
            let mut span = [0u8; 8];
            self.random.fill(&mut span);
            traceparent(&d.machine.record().request_id, u64::from_le_bytes(span))
        } else {
            None
        };
        if let Some(value) = &trace {
            extra.push(("traceparent".into(), value.clone()));
        }
        let timeout = u32::try_from((deadline - now).max(1)).unwrap_or(u32::MAX);
        let request = requests::command(
            &self.config.base_url,
            d.machine.record(),
            d.config.stream,
            self.config.legacy_timeout,
            &extra,
            timeout,
            self.float,
        );
        match request {
            Err(why) => {
                d.machine
                    .handle_transport_error(now, n, TransportError::NeverSent(why));
                self.attempt_ended(me, d)
            }
            Ok(request) => {
                if let Some(w) = self.watched(d.watch) {
                    w.sent = true;
                }
                let trace = trace.as_deref().map_or(Detail::None, Detail::Trace);
                self.event("attemptSent", d.machine.record(), trace);
                let url = request.url.clone();
                self.op(me, Do::Fetch(request));
                d.phase = Phase::Sending { n, deadline, url };
                Next::Keep(d)
            }
        }
    }

    fn attempt_ended(&mut self, me: TaskId, d: Box<DriveTask>) -> Next {
        self.event("attemptEnded", d.machine.record(), Detail::None);
        self.advance(me, d, None)
    }

    /// The machine is done: with `offline: "wait"`, an offline drive goes on
    /// once the runtime is back online; otherwise the drive is over.
    fn drive_ended(&mut self, me: TaskId, mut d: Box<DriveTask>, outcome: Outcome) -> Next {
        if d.offline && !self.config.offline_return {
            self.op(me, Do::WhenOnline);
            d.phase = Phase::Offline;
            return Next::Keep(d);
        }
        if outcome.status == Status::Escalated && !d.was_escalated && self.config.on_escalated {
            let text = crate::protocol::JsonOut::of(&outcome, self.float);
            self.tell(Do::Notify(Sink::Escalated, text));
        }
        if d.check_withdrawn && outcome.attempts == 0 && outcome.status == Status::Unknown {
            let id = outcome.intent_id.clone();
            self.find(me, &id, false);
            d.phase = Phase::Withdrawn(Box::new(outcome));
            return Next::Keep(d);
        }
        self.drive_over(d, outcome)
    }

    /// After a drive: the lock goes; an escalated intent waits on the
    /// history probe; a settled one lets the next intent of its scope go.
    fn drive_over(&mut self, d: Box<DriveTask>, outcome: Outcome) -> Next {
        if let Lock::Held(Some(lock)) | Lock::Asked(lock) = d.lock {
            self.tell(Do::Unlock { lock });
        }
        match outcome.status {
            Status::Escalated => self.probe.park(self.now),
            Status::Succeeded | Status::Rejected | Status::Conflict => {
                if let Some(scope) = d.machine.record().scope.clone() {
                    self.advance_scope(scope);
                }
            }
            Status::Unknown => {}
        }
        Next::Done(d.reported(Resumed::Driven(Box::new(outcome))))
    }

    /// A resume's try that found nothing to drive: its lock goes.
    fn left_alone(&mut self, d: Box<DriveTask>) -> Next {
        if let Lock::Held(Some(lock)) = d.lock {
            self.tell(Do::Unlock { lock });
        }
        Next::Done(d.reported(Resumed::Nothing))
    }

    /// The caller's signal aborted: the current attempt, and any after it
    /// in this drive, record `cancelled` as what ended its wait.
    fn note_left(&mut self, d: &mut DriveTask) {
        if self.watched.iter().any(|w| w.call == d.watch && w.left) {
            d.machine.caller_left();
        }
    }

    /// Tells `onEvent` about `record` (only written when it listens).
    pub(super) fn event(&mut self, kind: &str, record: &IntentRecord, detail: Detail) {
        if self.config.on_event {
            let text = events::lifecycle(kind, self.now, record, detail);
            self.tell(Do::Notify(Sink::Event, text));
        }
    }

    /// Announces a record written at `revision`: to the other tabs and
    /// subscribers, and to this client's queued callers listening for it.
    pub(super) fn announce(&mut self, record: &IntentRecord, revision: u64) {
        self.tell(Do::Announce(events::announcement(record, revision)));
        let settled = record.state.is_settled();
        self.hear(
            &record.intent_id,
            settled,
            record.state != IntentState::Withdrawn,
        );
    }

    /// What call `call`'s drive wrote last (an abort says so), and its
    /// intent's id the first time (`onIntent`).
    pub(super) fn watch_write(&mut self, call: CallId, record: IntentRecord) {
        let Some(w) = self.watched(call) else {
            return;
        };
        let first = w.record.is_none();
        let id = record.intent_id.clone();
        w.record = Some(record);
        if first {
            self.tell(Do::Told(call, id));
        }
    }
}

impl Engine {
    /// Ends every drive of this client now (sign-out, `clear()`): each lets
    /// its intent's lock go and its caller hears the intent as its record
    /// stands (unknown while anything may have been sent). What a drive had
    /// asked for already (a request, a write) may still land; nothing more
    /// of it is sent.
    pub(super) fn stop_drives(&mut self, why: &str) {
        // Each ended drive's place is taken by the last task: looked at next.
        let mut i = 0;
        while i < self.tasks.len() {
            let super::Slot { id, parent, task } = &self.tasks[i];
            let (id, parent) = (*id, *parent);
            let Some((lock, child)) = task.as_ref().and_then(|t| t.stop(why)) else {
                i += 1;
                continue;
            };
            if let Some(lock) = lock {
                self.tell(Do::Unlock { lock });
            }
            self.place(id, parent, Next::Done(child));
        }
    }
}

/// Why a drive asked for during a sign-out did not start.
const STOPPED_BY_SIGN_OUT: &str = "stopped: the user is signing out";

/// The outcome of an intent another tab or worker drives right now.
pub(super) fn busy(record: &IntentRecord) -> Outcome {
    Outcome::from_record(record).because("driven by another tab or worker right now")
}

/// The lock name of an intent.
pub fn lock_name(namespace: &str, intent_id: &str) -> String {
    text!("wow-command-client/", namespace, "/", intent_id)
}
