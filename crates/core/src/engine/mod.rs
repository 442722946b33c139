//! The client's engine: every decision of a `WowClient`, sans-IO. A public
//! call starts a task here; each task asks for what it needs as [`Io`]
//! values and is woken by what the executor reports back ([`Done`]), by a
//! child task's result, by its timer, by the history probe's answer or by
//! an announcement it listens for. Nothing here waits, reads a clock or
//! touches the browser: the executor (one per client, in the web layer)
//! performs each `Io`, and time comes in with every call.
//!
//! # Call order (quinn-proto's shape)
//!
//! ```text
//! let mut engine = Engine::new(config, float_text, iso8601, random);
//! engine.send(now, call, intent, machine, SendMode::AndWait, watched);   // a public call
//! loop {
//!     while let Some(io) = engine.poll_io() { /* perform it */ }
//!     //   its answer                   → handle(now, io.op, done)
//!     //   poll_timeout() reached       → handle_timeout(now)
//!     //   the runtime is online again  → handle_online(now)
//!     //   the page is visible again    → handle_visible(now)
//!     //   an intent's announcement     → handle_announced(now, intent_id, Option<IntentState>)
//!     //   the probe's word from a tab  → handle_heard(now, source, from, availability)
//!     //   a caller's signal aborted    → caller_left(now, call)
//! }
//! ```
//!
//! Tasks: storage procedures ([`store`]), a drive of one intent, a
//! resume's try included (`drive.rs`), the public calls, a file each, a
//! send's begin and its turn in its scope, each a task of its own before
//! its drive ([`calls`]), and the history probe's looks (`looks.rs`).
// No function of the engine, its tests included, over 80 lines of code
// (clippy.toml): each step reads at once.
#![warn(clippy::too_many_lines)]

pub mod answers;
pub mod calls;
mod drive;
pub mod events;
pub mod io;
mod line;
mod looks;
pub mod requests;
pub mod store;

use std::collections::VecDeque;

pub use io::{
    Ask, CallId, Do, Done, Entry, Failure, HistoryStatus, Io, LockKind, Locked, OpId, Reply,
    ReportValue, Request, Sink, Swap,
};

use crate::journal::{
    IntentRecord, IntentState, JournalError, Listing, RandomSource, RequestIdPolicy, StoreError,
};
use crate::machine::probe::TimeText;
use crate::machine::{
    Availability, ConfirmAnswer, GateConfig, Granted, MachineConfig, Outcome, Probe, ProbeAction,
    Ticket,
};
use crate::protocol::FloatText;

/// A task's id.
type TaskId = u32;

/// Where history's answers come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfirmWith {
    /// The gateway's event queries.
    Gateway,
    /// The caller's `confirm(question)`, one question at a time.
    One,
    /// The caller's `confirmBatch(questions)`.
    Batch,
}

/// A client's settings, as `connect` read them.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// The storage namespace.
    pub namespace: String,
    /// Who is signed in (`connect({ user })`; `None`: an app without
    /// sign-in). Only this user's intents are sent, listed or driven.
    pub user: Option<String>,
    /// The gateway's base URL, without a trailing slash.
    pub base_url: String,
    /// Header names a command may not carry, besides the credentials
    /// (`secretHeaders`), one per line.
    pub secret_headers: String,
    /// The largest answer read (`maxAnswerBytes`).
    pub max_answer_bytes: u32,
    /// The drives' settings.
    pub machine: MachineConfig,
    /// Also send `Command-Wait-Timout` (servers before 8.4).
    pub legacy_timeout: bool,
    /// A `headers()` function is asked before each request.
    pub headers: bool,
    /// Where confirmations are asked.
    pub confirm: ConfirmWith,
    /// `offline: "return"`: a drive that meets an offline runtime ends.
    pub offline_return: bool,
    /// Listeners: `onEvent`, `onHistory`, `onEscalated`.
    pub on_event: bool,
    /// `onHistory` listens.
    pub on_history: bool,
    /// `onEscalated` listens.
    pub on_escalated: bool,
    /// A `checkDownstream` connect option is given.
    pub check_downstream: bool,
    /// Each attempt carries a W3C `traceparent`.
    pub trace_context: bool,
    /// How random requestIds are minted.
    pub policy: RequestIdPolicy,
    /// How long settled intents are kept.
    pub retention_ms: i64,
    /// The shape history's questions are written in (`connect({ wow })`).
    pub query_shape: crate::protocol::QueryShape,
}

/// What a task is woken with.
#[derive(Debug)]
enum Wake {
    /// Its first step, once spawned (any state may be started).
    Start,
    /// Its operation's answer.
    Op(Done),
    /// A child task's result.
    Child(Child),
    /// Its timer.
    Timer,
    /// The history probe answered its question.
    Answer(ConfirmAnswer),
    /// An announcement it listens for, or its caller gone: look again.
    /// `true`: the one before it was settled by a drive, which ran in its
    /// turn, so nothing before it is unsettled: its own turn has come.
    Poke(bool),
}

/// A child task's result, for its parent.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // moved once, from a task to its parent
enum Child {
    Record(Result<Option<IntentRecord>, JournalError>),
    Wrote(Result<u64, StoreError>),
    Listing(Result<Listing, StoreError>),
    Removed(Result<(), StoreError>),
    Drove(Box<Outcome>),
    Resumed(usize, Resumed),
    /// A send's intent begun ([`calls`]'s `begin.rs`), or the failure that
    /// left nothing sent.
    Began(Result<crate::journal::Begun, Outcome>),
    /// A queued send's turn is over: its record as last read, and whether
    /// its turn came (else its caller's wait ended first).
    Turned(IntentRecord, bool),
    Nothing,
}

/// After a step: the task goes on in this state, or is done with this result.
#[allow(clippy::large_enum_variant)]
enum Next {
    Keep(Task),
    Done(Child),
}

/// What a resume found of one intent.
#[derive(Debug)]
enum Resumed {
    Driven(Box<Outcome>),
    Busy(String),
    Nothing,
}

/// A task's state between its steps. Each kind steps itself on the engine
/// (a storage procedure, [`store`]; an intent's drive, [`drive`]; a public
/// call, a send's begin or turn, [`calls`]; a look of the history probe,
/// [`looks`]), so the
/// engine's one table holds every kind and names none.
trait Step {
    /// Goes on from `wake`: kept in its new state, or done with its result.
    fn step(self: Box<Self>, engine: &mut Engine, me: TaskId, wake: Wake) -> Next;
    /// The intent it works on ([`Engine::intent_of`]).
    fn intent_id(&self) -> Option<&str> {
        None
    }
    /// If it is an intent's drive, what ending it now ([`Engine::stop_drives`])
    /// leaves: the lock to let go, and the result for its caller.
    fn stop(&self, _why: &str) -> Option<(Option<OpId>, Child)> {
        None
    }
}

/// Every kind of task ([`Step`]).
type Task = Box<dyn Step>;

/// A call whose caller may leave (a signal) or wants to hear its intent's
/// id (`onIntent`): what its drive wrote last, for the `Aborted` error.
#[derive(Debug)]
struct Watched {
    call: CallId,
    record: Option<IntentRecord>,
    /// A request may have left.
    sent: bool,
    /// Its caller left: the drive goes on without it.
    left: bool,
}

/// The engine of one client.
pub struct Engine {
    config: EngineConfig,
    float: FloatText,
    random: Box<dyn RandomSource>,
    /// This probe's messages, told apart from the other tabs' (53 bits: a JS number).
    me: u64,
    now: i64,
    /// Whether the runtime says it is online, as the executor last read it.
    online: bool,
    io: VecDeque<Io>,
    next_op: OpId,
    next_task: TaskId,
    /// Operations in flight and the tasks their answers wake. Found by id,
    /// in no order: an ended one's place takes the last one (no move of
    /// the rest, hundreds in a burst).
    ops: Vec<InFlight>,
    /// Live tasks, found by id, in no order, as `ops`.
    tasks: Vec<Slot>,
    /// Wakes not yet delivered (never delivered inside another step).
    wakes: VecDeque<(TaskId, Wake)>,
    timers: Vec<(i64, TaskId)>,
    probe: Probe,
    /// The probe's lock op, while asked for or held.
    probe_lock: Option<OpId>,
    /// The probe's questions and the drives that asked them.
    questions: Vec<(Ticket, TaskId)>,
    /// Tasks listening for announcements (a queued caller's turn), and the
    /// two intents whose announcements wake each.
    listening: Vec<(TaskId, [String; 2])>,
    /// Queued intents whose callers wait in this client: each is sent by
    /// its own caller's drive, not by the drive that settled the one before.
    waited_here: Vec<String>,
    /// The scopes of those callers, one entry each.
    waiting_scopes: Vec<String>,
    /// The scopes this client's sends are taking places in.
    lines: Vec<Line>,
    watched: Vec<Watched>,
    /// Messages from other tabs dropped as unreadable or implausible.
    dropped: u32,
    /// Wakes a task's state did not ask for ([`Engine::unasked`]).
    unasked: u32,
    /// Sign-outs under way: meanwhile no drive starts, no send writes its
    /// record, and a send, confirm or retry is refused (`SigningOut`).
    signing_out: u32,
    /// The count paths whose answers to the `filter` shape were checked
    /// (a requestId never used counted 0): trusted from then on.
    shape_checked: Vec<String>,
}

/// A scope's line in this client ([`line`]).
#[derive(Debug)]
struct Line {
    scope: String,
    /// The scope lock's op, and its answer once come.
    lock: OpId,
    locked: Option<Locked>,
    /// The sends that joined, in the order of their calls; the one at
    /// `next` takes its place now, those after it wait.
    queue: Vec<TaskId>,
    next: usize,
    /// Places written and not stored yet.
    writes: u32,
    /// The scope as listed under this hold, with the places taken since.
    view: Option<Vec<IntentRecord>>,
}

/// A live task: its parent (woken with its result) and its state (taken
/// out while it steps).
struct Slot {
    id: TaskId,
    parent: Option<TaskId>,
    task: Option<Task>,
}

/// An operation in flight, and the task its answer wakes.
struct InFlight {
    op: OpId,
    task: TaskId,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Engine")
    }
}

impl Engine {
    /// An engine for one client; `float` writes a fingerprint's
    /// non-integral numbers ([`crate::protocol::float_text`] or the
    /// engine's digits); `time` the times a message names
    /// ([`crate::machine::probe::iso8601`] or the engine's); `random`
    /// mints requestIds and seeds jitter.
    pub fn new(
        config: EngineConfig,
        float: FloatText,
        time: TimeText,
        mut random: Box<dyn RandomSource>,
    ) -> Engine {
        let mut seed = [0u8; 8];
        random.fill(&mut seed);
        let mut me = [0u8; 8];
        random.fill(&mut me);
        let gate = GateConfig {
            batch: match config.confirm {
                ConfirmWith::One => 1,
                _ => crate::machine::history::MAX_BATCH,
            },
            // The leader's look takes at most the attempts' timeout (`within_ms`).
            overdue_ms: config.machine.caller_timeout_ms.saturating_add(1_000),
            ..GateConfig::default()
        };
        Engine {
            config,
            float,
            random,
            me: u64::from_le_bytes(me) >> 11,
            now: 0,
            online: true,
            io: VecDeque::new(),
            next_op: OpId::FIRST,
            next_task: 1,
            ops: Vec::new(),
            tasks: Vec::new(),
            wakes: VecDeque::new(),
            timers: Vec::new(),
            probe: Probe::new(gate, u64::from_le_bytes(seed), time),
            probe_lock: None,
            questions: Vec::new(),
            listening: Vec::new(),
            waited_here: Vec::new(),
            waiting_scopes: Vec::new(),
            lines: Vec::new(),
            watched: Vec::new(),
            shape_checked: Vec::new(),
            dropped: 0,
            unasked: 0,
            signing_out: 0,
        }
    }

    /// The client's settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The next thing to do.
    pub fn poll_io(&mut self) -> Option<Io> {
        self.io.pop_front()
    }

    /// When [`Engine::handle_timeout`] is due next.
    pub fn poll_timeout(&self) -> Option<i64> {
        let tasks = self.timers.iter().map(|(at, _)| *at).min();
        match (tasks, self.probe.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// `client.history`: whether history answers, and what waits for it.
    pub fn history(&self) -> HistoryStatus {
        let gate = self.probe.gate();
        HistoryStatus {
            availability: gate.availability(),
            waiting: gate.waiting() as u32,
            dropped: self.dropped,
        }
    }

    /// Whether the runtime says it is online (read by the executor before
    /// each event it reports).
    pub fn set_online(&mut self, online: bool) {
        self.online = online;
    }

    /// The intent whose work (its send, its resume, its drive) operation
    /// `op`'s answer serves, if any: what
    /// the executor names as handled, so that an intent whose handling
    /// stops the module can be set aside ([`Read::SetAside`](calls::Read::SetAside)).
    pub fn intent_of(&self, op: OpId) -> Option<&str> {
        let mut task = self.ops.get(index(&self.ops, op, |o| o.op)?)?.task;
        loop {
            let Slot {
                parent,
                task: state,
                ..
            } = &self.tasks[index(&self.tasks, task, |t| t.id)?];
            let id = state.as_ref().and_then(|t| t.intent_id());
            if id.is_some() {
                return id;
            }
            task = (*parent)?;
        }
    }

    /// The answer to operation `op`.
    pub fn handle(&mut self, now: i64, op: OpId, done: Done) {
        self.now = now;
        if Some(op) == self.probe_lock {
            if let Done::Locked(locked) = done {
                let granted = match locked {
                    Locked::Held => Granted::Held,
                    Locked::Busy => {
                        self.probe_lock = None;
                        Granted::Busy
                    }
                    Locked::Unsupported => {
                        self.probe_lock = None;
                        Granted::Unsupported
                    }
                };
                self.probe.handle_lock(now, granted);
            }
        } else if let Some(i) = index(&self.ops, op, |o| o.op) {
            // A stream's elements, a listing's parts, keep its op open until it ends.
            let task = if matches!(done, Done::Element(_) | Done::ListedPart(_)) {
                self.ops[i].task
            } else {
                self.ops.swap_remove(i).task
            };
            self.wakes.push_back((task, Wake::Op(done)));
        }
        self.run();
    }

    /// A time [`Engine::poll_timeout`] gave has come.
    pub fn handle_timeout(&mut self, now: i64) {
        self.now = now;
        let mut i = 0;
        while i < self.timers.len() {
            if self.timers[i].0 <= now {
                let (_, task) = self.timers.swap_remove(i);
                self.wakes.push_back((task, Wake::Timer));
            } else {
                i += 1;
            }
        }
        if self.probe.poll_timeout().is_some_and(|at| at <= now) {
            self.probe.handle_timeout(now);
        }
        self.run();
    }

    /// The runtime is online again: what waits for it goes on, history is
    /// looked at, and the journal's unresolved intents are driven (each by
    /// one driver across tabs).
    pub fn handle_online(&mut self, now: i64) {
        self.now = now;
        self.online = true;
        self.probe.wake(now);
        self.resume(now, 0, true);
    }

    /// The page is visible again: history is looked at.
    pub fn handle_visible(&mut self, now: i64) {
        self.now = now;
        self.probe.wake(now);
        self.run();
    }

    /// An intent of the namespace was announced (by anyone) in `state`
    /// (`None`: a state this build does not know): queued callers waiting
    /// for it look at their scope again.
    ///
    /// What another tab says is a hint, never a fact: a caller woken by it
    /// reads its scope again before it sends (a forged "the one before you
    /// succeeded" sends nothing out of turn).
    pub fn handle_announced(&mut self, now: i64, intent_id: &str, state: Option<IntentState>) {
        self.now = now;
        let settled = state.is_some_and(IntentState::is_settled);
        self.hear(intent_id, settled, false);
        self.run();
    }

    /// A message on a channel that could not be read, or whose times no
    /// probe could have written: dropped, and counted (`client.history`).
    pub fn drop_message(&mut self) {
        self.dropped = self.dropped.saturating_add(1);
    }

    /// Wakes the queued callers an announcement concerns: the one whose
    /// predecessor settled (any other change of it does not change whose
    /// turn it is), and the one whose own intent changed (withdrawn, or
    /// sent by another tab). `driven`: not settled by a withdrawal.
    fn hear(&mut self, intent_id: &str, settled: bool, driven: bool) {
        for (task, [before, own]) in &self.listening {
            if own == intent_id {
                self.wakes.push_back((*task, Wake::Poke(false)));
            } else if settled && before == intent_id {
                self.wakes.push_back((*task, Wake::Poke(driven)));
            }
        }
    }

    /// A message on the probe's channel: another tab's or worker's word on
    /// its look at history, from probe `from` about `source`'s history
    /// (this probe's own, and another source's, are not news).
    pub fn handle_heard(&mut self, now: i64, source: &str, from: u64, availability: Availability) {
        self.now = now;
        if from != self.me && source == self.history_source() {
            if self.probe.gate().plausible(now, availability) {
                self.probe.handle_heard(now, availability);
            } else {
                self.drop_message();
            }
        }
        self.run();
    }

    // ------------------------------------------------------------ plumbing

    /// Asks the executor to do `what` for task `task`; the answer wakes it.
    fn op(&mut self, task: TaskId, what: Do) -> OpId {
        let op = self.new_op();
        self.ops.push(InFlight { op, task });
        self.io.push_back(Io { op, what });
        op
    }

    /// Asks the executor to do `what`, expecting no answer.
    fn tell(&mut self, what: Do) {
        self.io.push_back(Io {
            op: OpId::NONE,
            what,
        });
    }

    /// Puts task `id` (made by [`Engine::new_id`]) in the table, under
    /// `parent`: the one task table every kind of task lives in.
    fn add(&mut self, id: TaskId, parent: Option<TaskId>, task: Option<Task>) {
        self.tasks.push(Slot { id, parent, task });
    }

    /// A new task under `parent` (its result wakes the parent); started by its first op.
    fn child(&mut self, parent: TaskId, task: Task) -> TaskId {
        let id = self.new_id();
        self.add(id, Some(parent), Some(task));
        id
    }

    /// A new task, woken at once with [`Wake::Start`].
    fn spawn(&mut self, parent: Option<TaskId>, task: Task) -> TaskId {
        let id = self.new_id();
        self.add(id, parent, Some(task));
        self.wakes.push_back((id, Wake::Start));
        id
    }

    /// A new task under `parent`, stepped at once with [`Wake::Start`]:
    /// nothing happens between the step that makes it and its first.
    fn start(&mut self, parent: TaskId, task: Task) {
        let id = self.new_id();
        self.add(id, Some(parent), None);
        let next = task.step(self, id, Wake::Start);
        self.place(id, Some(parent), next);
    }

    /// A new operation's id ([`OpId`]).
    fn new_op(&mut self) -> OpId {
        let op = self.next_op;
        self.next_op = op.next();
        op
    }

    fn new_id(&mut self) -> TaskId {
        let id = self.next_task;
        self.next_task = self.next_task.wrapping_add(1).max(1);
        id
    }

    /// Wakes task `task` at `at`.
    fn timer(&mut self, task: TaskId, at: i64) {
        self.untime(task);
        self.timers.push((at, task));
    }

    /// A wake its task's state did not ask for: the task keeps waiting for
    /// what it did ask for. `Start` (a task whose work began when it was
    /// made) and `Poke` (told to every listener) may come to any state;
    /// anything else is a defect in the engine: counted, and a failing test
    /// in the module's own (debug) builds, never a silent hang there.
    fn unasked(&mut self, wake: &Wake, what: &'static str) {
        if matches!(wake, Wake::Start | Wake::Poke(_)) {
            return;
        }
        self.unasked = self.unasked.saturating_add(1);
        #[cfg(debug_assertions)]
        panic!("{what}: a wake its state did not ask for: {wake:?}");
        #[cfg(not(debug_assertions))]
        let _ = what;
    }

    /// How many wakes no task's state asked for (0 unless the engine has
    /// a defect).
    pub fn unasked_wakes(&self) -> u32 {
        self.unasked
    }

    /// Task `task`'s timer goes (a task has one at most).
    fn untime(&mut self, task: TaskId) {
        if let Some(i) = self.timers.iter().position(|(_, t)| *t == task) {
            self.timers.swap_remove(i);
        }
    }

    /// Delivers every wake due, performing what the probe asks between them.
    fn run(&mut self) {
        loop {
            self.drain_probe();
            let Some((id, wake)) = self.wakes.pop_front() else {
                break;
            };
            // A task already gone: an answer to what it asked before it
            // ended (a drive `stop_drives` ended), or its child's result.
            let Some(i) = index(&self.tasks, id, |t| t.id) else {
                continue;
            };
            let slot = &mut self.tasks[i];
            let parent = slot.parent;
            // A task is out of its slot only while it steps, and no wake is
            // delivered inside a step.
            let Some(task) = slot.task.take() else {
                self.unasked(&wake, "a task between its steps");
                continue;
            };
            let next = task.step(self, id, wake);
            self.place(id, parent, next);
        }
    }

    /// Puts a task that stepped back in its slot, or ends it: its timer,
    /// its listening and its wait for the network go, and its parent is
    /// woken with its result.
    fn place(&mut self, id: TaskId, parent: Option<TaskId>, next: Next) {
        match next {
            Next::Keep(task) => {
                if let Some(i) = index(&self.tasks, id, |t| t.id) {
                    self.tasks[i].task = Some(task);
                }
            }
            Next::Done(child) => {
                if let Some(i) = index(&self.tasks, id, |t| t.id) {
                    self.tasks.swap_remove(i);
                }
                self.untime(id);
                self.unlisten(id);
                if let Some(parent) = parent {
                    self.wakes.push_back((parent, Wake::Child(child)));
                }
            }
        }
    }

    /// Performs what the probe asks.
    fn drain_probe(&mut self) {
        while let Some(action) = self.probe.poll_action() {
            match action {
                ProbeAction::Look(look) => self.look(look),
                ProbeAction::TakeLock => {
                    let name = crate::text::text!(
                        "wow-command-client/",
                        self.config.namespace,
                        "/history/",
                        self.history_source()
                    );
                    let op = self.new_op();
                    self.probe_lock = Some(op);
                    self.io.push_back(Io {
                        op,
                        what: Do::Lock {
                            name,
                            wait_ms: i32::MAX as u64,
                            kind: LockKind::Probe,
                        },
                    });
                }
                ProbeAction::ReleaseLock => {
                    if let Some(lock) = self.probe_lock.take() {
                        self.tell(Do::Unlock { lock });
                    }
                }
                ProbeAction::Post(is) => {
                    let text = events::availability_message(&self.history_source(), self.me, is);
                    self.tell(Do::Post(text));
                }
                ProbeAction::Changed { was, is, waiting } => {
                    if self.config.on_history {
                        let text = events::history_event(self.now, was, is, waiting);
                        self.tell(Do::Notify(Sink::History, text));
                    }
                }
                ProbeAction::Answer(ticket, answer) => {
                    if let Some(i) = self.questions.iter().position(|(t, _)| *t == ticket) {
                        let (_, task) = self.questions.swap_remove(i);
                        self.wakes.push_back((task, Wake::Answer(answer)));
                    }
                }
                ProbeAction::LookForEscalated => self.look_for_escalated(),
                ProbeAction::DriveEscalated => {
                    self.resume_escalated();
                }
            }
        }
    }

    /// Who the probe's tabs are: the gateway's URL, or `confirm` for a
    /// caller's confirmer, and the user (one probe per namespace, source
    /// and user: one user's looks never speak for another's, nor wait on them).
    fn history_source(&self) -> String {
        let source = match self.config.confirm {
            ConfirmWith::Gateway => self.config.base_url.as_str(),
            _ => "confirm",
        };
        self.for_user(source)
    }

    /// `name` for this client's user: as it is for an app without sign-in
    /// (what builds before users named it), else with ` user <user>` after it.
    fn for_user(&self, name: &str) -> String {
        match &self.config.user {
            Some(user) => crate::text::text!(name, " user ", user),
            None => name.to_owned(),
        }
    }

    /// What a `headers()` call is asked: the user, what the request is for
    /// (`command`, `history` or `snapshot`) and the intents it concerns.
    fn headers_for(&self, purpose: &str, ids: &[&str]) -> Do {
        let mut out = crate::protocol::JsonOut::new(|_, _| {});
        crate::protocol::ObjectWriter::new(&mut out)
            .put("user", &self.config.user)
            .put("purpose", &purpose)
            .put("intentIds", &ids)
            .done();
        Do::Ask(Ask::Headers(out.text))
    }

    /// Task `task` listens for the announcements of intents `ids` (the
    /// executor hears the channel while anyone here listens).
    fn listen(&mut self, task: TaskId, ids: [String; 2]) {
        if let Some(entry) = self.listening.iter_mut().find(|(t, _)| *t == task) {
            entry.1 = ids;
            return;
        }
        if self.listening.is_empty() {
            self.tell(Do::Listen(true));
        }
        self.listening.push((task, ids));
    }

    /// Task `task` stops listening.
    fn unlisten(&mut self, task: TaskId) {
        // A task listens once at most.
        if let Some(i) = self.listening.iter().position(|(t, _)| *t == task) {
            self.listening.swap_remove(i);
            if self.listening.is_empty() {
                self.tell(Do::Listen(false));
            }
        }
    }

    fn watched(&mut self, call: CallId) -> Option<&mut Watched> {
        self.watched.iter_mut().find(|w| w.call == call)
    }
}

/// Where `id` is in `items` (a scan: a few thousand at most, and a
/// binary search measured larger in the download for no visible gain).
fn index<T, I: PartialEq>(items: &[T], id: I, key: impl Fn(&T) -> I) -> Option<usize> {
    items.iter().position(|t| key(t) == id)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod random_worlds;
#[cfg(test)]
mod tests;
