//! The public calls, each a task (`CallTask`): `send` (its begin, its
//! place in its scope, its turn, its drive), `resume`, `confirm` and
//! `retry`, `withdraw` and `withdrawScope`, the journal's reads,
//! `awaitDownstream` and sign-out; and what the engine does by itself: the
//! next intent of a scope once the one before it settles, the probe's look
//! for what waits at rest, the drive of what waited once history answers.
//!
//! Here: every call's entry point, which makes its task, and the one
//! dispatch of a task's steps. Each call's state and steps are a file of
//! their own below (`send.rs`, `resume.rs`, …; a send's begin and its
//! turn are tasks of their own, `begin.rs` and `turn.rs`), and what they
//! share (a call's settling, the outcomes its failures carry) is
//! `outcomes.rs`, beneath them all: no file here uses this one.

mod begin;
mod downstream;
mod outcomes;
mod person;
mod read;
mod resume;
mod send;
mod sign_out;
mod turn;
mod withdraw;

pub use outcomes::{invalid, journal_failure};
pub use read::Read;
pub use send::SendMode;

use downstream::Downstream;
use outcomes::{aborted, signing_out};
use person::{Person, PersonAsks};
use read::Reading;
use resume::Resume;
use send::Send;
use sign_out::Purge;
use withdraw::Withdraw;

use crate::engine::io::{CallId, Do, Io, OpId, Reply};
use crate::engine::{Engine, Next, Step, TaskId, Wake};
use crate::journal::{new_record, NewIntent};
use crate::machine::{MachineConfig, Outcome};
use crate::protocol::CommandStage;

/// A public call in progress (or the engine's own work: `call` 0), its
/// state one of the calls' (each stepped in its own file).
#[derive(Debug)]
struct CallTask {
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
}

impl Engine {
    /// Puts call `call`'s task in the table (started by its first op).
    fn call_task(&mut self, call: CallId, kind: Kind) -> TaskId {
        let me = self.new_id();
        self.add(me, None, Some(Box::new(CallTask { call, kind })));
        me
    }

    /// The same, started at once (woken with its first step).
    fn spawn_call(&mut self, call: CallId, kind: Kind) -> TaskId {
        self.spawn(None, Box::new(CallTask { call, kind }))
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

impl Engine {
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
        let send = Send::new(mode, config, create);
        let me = self.call_task(call, Kind::Send(Box::new(send)));
        self.begin(me, call, key, record, fingerprint);
        self.run();
    }

    /// `resume()`: drives every unresolved intent of the namespace, each
    /// under its lock (`automatic`: only where there are locks, never racing).
    pub fn resume(&mut self, now: i64, call: CallId, automatic: bool) {
        self.now = now;
        if call != 0 {
            self.probe.wake(now);
        }
        self.spawn_call(call, Kind::Resume(Resume::new(automatic)));
        self.run();
    }

    /// The engine's own resume of what waited once history answers
    /// ([`ProbeAction::DriveEscalated`](crate::machine::ProbeAction)).
    pub(in crate::engine) fn resume_escalated(&mut self) {
        self.spawn_call(0, Kind::Resume(Resume::new(true)));
    }

    /// Sends the next intent of `scope` when its turn has come and no
    /// caller in this client waits to send it itself: under its lock, as
    /// `resume()` does, so one driver sends it across tabs.
    pub(in crate::engine) fn advance_scope(&mut self, scope: String) {
        // A caller here waits in that scope: it drives what is next, or a
        // head nobody drives (its tab was closed), at its next look.
        if self.waiting_scopes.contains(&scope) {
            return;
        }
        let me = self.call_task(0, Kind::Advance);
        self.list(me, Some(&scope));
    }

    /// The probe's look for what waits on it at rest: the journal's
    /// escalated intents, asked about together.
    pub(in crate::engine) fn look_for_escalated(&mut self) {
        let me = self.call_task(0, Kind::Escalated);
        self.list(me, None);
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
        // Called during a sign-out: refused, as a send is (one begun
        // before it finds its drive not started, drive.rs).
        if self.signing_out > 0 {
            return self.fail_now(call, signing_out());
        }
        self.watch(call, watched);
        let person = Person::new(asked, intent);
        let me = self.call_task(call, Kind::Person(person));
        self.find(me, intent, true);
        self.run();
    }

    /// `withdraw(intent)`, or `withdrawScope(scope)` (`scope`: true).
    pub fn withdraw(&mut self, now: i64, call: CallId, target: &str, scope: bool) {
        self.now = now;
        let withdraw = Withdraw::new(target, scope);
        let me = self.call_task(call, Kind::Withdraw(withdraw));
        if scope {
            self.list(me, Some(target));
        } else {
            self.find(me, target, true);
        }
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
            self.signing_out += 1;
            self.stop_drives(if purge {
                "stopped: the user's intents were removed from this device"
            } else {
                "stopped: the user signed out; the intent is kept for their next sign-in"
            });
        }
        let purge = Purge::new(purge, close, adopt);
        let me = self.call_task(call, Kind::Purge(Box::new(purge)));
        if adopt {
            self.list_unowned(me);
        } else {
            self.list(me, None);
        }
        self.run();
    }

    /// The journal's reads: one intent, every intent, the quarantine, and
    /// pruning and clearing; `connect`'s first look at the store.
    pub fn read(&mut self, now: i64, call: CallId, read: Read) {
        self.now = now;
        // One intent's read, or setting one aside, starts from its id; the others list.
        let id = match &read {
            Read::Intent(id) | Read::SetAside(id) => Some(id.clone()),
            _ => None,
        };
        let aside = matches!(read, Read::SetAside(_));
        // A read that hands out no records (or only those to remove) keeps no others.
        let keep = match read {
            Read::Quarantined | Read::Connect => crate::engine::store::Keep::Nothing,
            Read::Prune => crate::engine::store::Keep::Prunable,
            _ => crate::engine::store::Keep::All,
        };
        let me = self.call_task(call, Kind::Read(Reading::new(read)));
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
        let timeout_ms = timeout_ms.unwrap_or(self.config.machine.caller_timeout_ms);
        let d = Downstream::new(stage, timeout_ms, check || self.config.check_downstream);
        let me = self.call_task(call, Kind::Downstream(Box::new(d)));
        self.find(me, intent, true);
        self.run();
    }

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
}
