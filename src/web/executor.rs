//! The one executor of a client: it performs what the core's [`Engine`]
//! asks ([`Io`]) with the browser's APIs and hands back what happened
//! ([`Done`]). It decides nothing. It holds no future: every wait on the
//! browser (a store's promise, a fetch, a stream's next chunk, a lock, the
//! timer, a caller's callback) is a JS promise whose end calls back one
//! function of the module's (`complete`), with the executor's id and the
//! operation's; an executor that is gone is not called.
//!
//! What it holds from the browser (locks, readers, listeners, promise
//! settlers) is held here, per client, so that letting go of a client lets
//! go of everything it held.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::locks::{local_lock_wait, lock_background, lock_try, lock_wait};
use super::{safe_read, time, to_js, JsFailure};
use crate::core::connect_input::CallerFunctions;
use crate::core::engine::{
    answers, Ask, CallId, Do, Done, Engine, Failure, Io, LockKind, Locked, OpId, Reply, Request,
    Sink, Swap,
};
use crate::core::journal::{Body, IntentRecord, RecordError};
use crate::core::machine::{ConfirmAnswer, LookAnswer};
use crate::core::protocol::{JsonValue, SseDecoder, StreamElement};
use crate::core::text::text;

#[wasm_bindgen(module = "/src/web/executor.js")]
extern "C" {
    fn settled(promise: &js_sys::Promise, f: &js_sys::Function, id: u32, tag: u32);
    #[wasm_bindgen(js_name = idleTimer)]
    fn idle_timer(ms: f64, f: &js_sys::Function, id: u32, tag: u32) -> JsValue;
    #[wasm_bindgen(js_name = clearTimer)]
    fn clear_timer(timer: &JsValue);
    #[wasm_bindgen(js_name = onAbort)]
    fn on_abort(signal: &JsValue, f: &js_sys::Function, id: u32, tag: u32);
    /// The lock `promise` asked for, let go with the client's holdings `of`.
    #[wasm_bindgen(js_name = ownLock)]
    fn own_lock(promise: &js_sys::Promise, of: &JsValue) -> js_sys::Promise;
    /// `f(id, tag, true)` in a task of its own, after what the page has waiting.
    #[wasm_bindgen(js_name = nextTask)]
    fn next_task(f: &js_sys::Function, id: u32, tag: u32);
}

/// How long one slice of a long piece of work may hold the page's thread
/// (ms): well under the 50 ms of a long task, on a device several times
/// slower than a desktop.
const SLICE_MS: i64 = 8;

/// How many records a call settles with at once; more are made into JS a
/// slice at a time ([`Executor::settle_slices`]).
const SLICE_RECORDS: usize = 64;

/// A send started in a later task: its call, the start, and whether its
/// caller left meanwhile (told to the engine once it has started).
type Later = (CallId, Box<dyn FnOnce(&mut Engine, i64)>, bool);

#[wasm_bindgen(module = "/src/web/held.js")]
extern "C" {
    /// The module instance's generation (a fresh one after a restart).
    fn generation() -> u32;
    /// A client's holdings: what it holds from the browser, let go with it.
    fn holdings() -> JsValue;
    /// Whether the client is being freed by `free()`, not by its finalizer.
    fn freeing() -> bool;
    /// The intent whose work is handled now ("": none), named should the
    /// module stop meanwhile (src/web/instance.js).
    fn handling(intent_id: &str);
    /// Lets go of them: its calls end, its locks, requests and channels go.
    #[wasm_bindgen(js_name = letGoOf)]
    fn let_go_of(of: &JsValue);
}

#[wasm_bindgen(module = "/src/web/runtime.js")]
extern "C" {
    #[wasm_bindgen(js_name = callWithin)]
    fn call_within(
        f: &js_sys::Function,
        this: &JsValue,
        args: &js_sys::Array,
        ms: u32,
        what: &str,
    ) -> js_sys::Promise;
}

#[wasm_bindgen(module = "/src/web/network.js")]
extern "C" {
    #[wasm_bindgen(js_name = gatewayFetch, catch)]
    fn gateway_fetch(
        url: &str,
        method: &str,
        headers: &str,
        body: &str,
        timeout_ms: u32,
        of: &JsValue,
        held: &JsValue,
    ) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(js_name = readJsonBody)]
    fn read_json_body(response: &web_sys::Response, limit: u32) -> js_sys::Promise;
    /// Where the client's requests may go (its `baseUrl`), kept with its holdings `of`.
    #[wasm_bindgen(js_name = fenceTo)]
    fn fence_to(of: &JsValue, base: &str);
    #[wasm_bindgen(js_name = textReader)]
    pub(super) fn text_reader(
        body: &web_sys::ReadableStream,
    ) -> web_sys::ReadableStreamDefaultReader;
    #[wasm_bindgen(js_name = isOnline)]
    fn is_online() -> bool;
    #[wasm_bindgen(js_name = whenOnline)]
    fn when_online() -> js_sys::Promise;
}

#[wasm_bindgen(module = "/src/web/network.js")]
extern "C" {
    #[wasm_bindgen(js_name = onWake)]
    fn on_wake(f: &js_sys::Function, visible: bool, of: &JsValue) -> js_sys::Function;
}

#[wasm_bindgen(module = "/src/web/executor.js")]
extern "C" {
    #[wasm_bindgen(js_name = telemetryNote)]
    fn telemetry_note(sink: &js_sys::Function, event: &str);
}

/// The tags of the waits that are not an engine's operation (those are
/// below `ANNOUNCED`): the timer, the channels' messages, the runtime's
/// wake-ups, and a caller's abort (`ABORT | call`).
const TIMER: u32 = 0;
const ANNOUNCED: u32 = 0x7FFF_FFF0;
const HEARD: u32 = 0x7FFF_FFF1;
const ONLINE: u32 = 0x7FFF_FFF2;
const VISIBLE: u32 = 0x7FFF_FFF3;
const SLICES: u32 = 0x7FFF_FFF4;
const PUMP: u32 = 0x7FFF_FFF5;
const LATER: u32 = 0x7FFF_FFF6;
const ABORT: u32 = 1 << 31;

/// The caller's functions, as `connect` read them, and how long each may
/// take (0: unbounded).
#[derive(Default)]
pub struct Callbacks {
    /// The functions.
    pub functions: CallerFunctions<js_sys::Function>,
    /// How long each may take (0: unbounded).
    pub within_ms: u32,
}

/// How a call's end reaches its caller.
pub enum Settler {
    /// A promise's resolve and reject.
    Promise(js_sys::Function, js_sys::Function),
    /// A stage stream's `push(value)` and `finish(outcome, error)`.
    Stream(js_sys::Function, js_sys::Function),
}

/// A call waiting for its end.
pub struct CallEntry {
    /// Where it settles.
    pub settler: Settler,
    /// What the call is named in its mistakes (`awaitDownstream`).
    pub name: &'static str,
    /// Resolved with on `connect`'s success: the client itself.
    pub value: JsValue,
    /// `onIntent`.
    pub on_intent: Option<js_sys::Function>,
    /// `awaitDownstream`'s own `check`.
    pub check: Option<js_sys::Function>,
    /// The call's JS side (`pendingCall`'s, a stream's parts): told its
    /// intent's id, which it ends with if the module stops first.
    pub handle: JsValue,
}

/// What an operation in flight is, so its answer can be read.
enum Pending {
    Get,
    /// A field and the value an entry held as an object must have to be read.
    List(Option<(String, String)>),
    /// A listing read into the module slice by slice, a task each (no
    /// task of the page's held long by a large journal): what is left of
    /// it, last first.
    Listing {
        only: Option<(String, String)>,
        left: Vec<JsValue>,
    },
    Put,
    Remove,
    Lock {
        kind: LockKind,
        name: String,
    },
    Fetch {
        stream: bool,
    },
    Body {
        status: u16,
        error_code: Option<String>,
        retry_after: Option<u64>,
    },
    Chunk {
        reader: web_sys::ReadableStreamDefaultReader,
        decoder: Box<SseDecoder>,
        /// Bytes of text read so far (the stream is cut past `maxAnswerBytes`).
        read: usize,
    },
    Headers,
    Confirm,
    ConfirmBatch,
    Check,
    Online,
}

/// How the binding layer turns a call's end into what its caller gets
/// (a `CommandError`, a result, a record), and settles it.
pub type SettleFn = fn(&CallEntry, Reply);

/// The executor of one client.
pub struct Executor {
    id: u32,
    settle: SettleFn,
    engine: RefCell<Engine>,
    store: JsValue,
    callbacks: Callbacks,
    pending: RefCell<Vec<(OpId, Pending)>>,
    calls: RefCell<Vec<(CallId, CallEntry)>>,
    /// Calls settling with many records, made into JS a slice per task:
    /// each with what is left (last first) and the array made so far.
    settling: RefCell<Vec<(CallEntry, Vec<IntentRecord>, js_sys::Array)>>,
    next_call: Cell<CallId>,
    /// Locks held, by the op that took them: the function that lets each go.
    locks: RefCell<Vec<(OpId, js_sys::Function)>>,
    /// Lock requests let go of before they were granted (their ops' tags).
    dropped: RefCell<Vec<u32>>,
    /// When the armed timer fires, and the timer.
    timer: RefCell<(i64, JsValue)>,
    channels: super::channel::Channels,
    /// What it holds from the browser (src/web/held.js): let go when freed.
    holdings: JsValue,
    /// Freed: gone once its calls have ended.
    freed: Cell<bool>,
    /// Gone: everything let go.
    gone: Cell<bool>,
    /// When the executor began performing the engine's operations since
    /// the last [`PUMP`] task, how many it performed, and whether the next
    /// ones wait for that task (after [`SLICE_MS`]): a burst of sends starts
    /// its requests a slice per task, not all in one.
    slice: Cell<(Option<i64>, u32, bool)>,
    /// Sends started in later tasks, one a task, in the order they were
    /// given ([`LARGE_BODY`](super::LARGE_BODY)).
    later: RefCell<Vec<Later>>,
}

thread_local! {
    static EXECUTORS: RefCell<Vec<Rc<Executor>>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u32> = const { Cell::new(1) };
    static COMPLETE: js_sys::Function = Closure::<dyn Fn(u32, u32, bool, JsValue)>::new(complete)
        .into_js_value()
        .unchecked_into();
}

/// Where every wait of every executor calls back: executor `id`'s
/// operation `tag` ended (`ok`: resolved with `value`, else rejected).
fn complete(id: u32, tag: u32, ok: bool, value: JsValue) {
    let executor = EXECUTORS.with(|all| all.borrow().iter().find(|e| e.id == id).cloned());
    if let Some(executor) = executor {
        executor.complete(tag, ok, value);
    }
}

fn callback() -> js_sys::Function {
    COMPLETE.with(|f| f.clone())
}

impl Executor {
    /// An executor for `engine` over `store` (from [`open`](super::storage::open)); calls
    /// end through `settle`.
    pub fn start(
        engine: Engine,
        store: JsValue,
        callbacks: Callbacks,
        settle: SettleFn,
    ) -> Rc<Executor> {
        // Distinct from every id of a stopped instance's executors.
        let id = NEXT_ID.with(|n| {
            let id = n.get();
            n.set(id.wrapping_add(1).max(1) & 0xF_FFFF);
            id.max(1) | generation() << 20
        });
        let namespace = engine.config().namespace.clone();
        let f = callback();
        let of = holdings();
        fence_to(&of, &engine.config().base_url);
        for tag in [ONLINE, VISIBLE] {
            on_wake(&super::channel::bind(&f, id, tag), tag == VISIBLE, &of);
        }
        let executor = Rc::new(Executor {
            id,
            settle,
            engine: RefCell::new(engine),
            store,
            callbacks,
            pending: RefCell::default(),
            calls: RefCell::default(),
            settling: RefCell::default(),
            next_call: Cell::new(1),
            locks: RefCell::default(),
            dropped: RefCell::default(),
            timer: RefCell::new((i64::MAX, JsValue::UNDEFINED)),
            channels: super::channel::Channels::open(&namespace, &f, id, HEARD, &of),
            holdings: of,
            freed: Cell::new(false),
            gone: Cell::new(false),
            slice: Cell::new((None, 0, false)),
            later: RefCell::default(),
        });
        EXECUTORS.with(|all| all.borrow_mut().push(executor.clone()));
        executor
    }

    /// The journal's store (kept for a restart: a memory journal lives in it).
    pub fn store(&self) -> &JsValue {
        &self.store
    }

    /// What the client holds, for a call's settlers to be let go with it.
    pub fn holdings(&self) -> &JsValue {
        &self.holdings
    }

    /// The engine, for a call to start something.
    pub fn engine(&self) -> std::cell::RefMut<'_, Engine> {
        let mut engine = self.engine.borrow_mut();
        engine.set_online(is_online());
        engine
    }

    /// A new call: its id, with its settler kept until it ends.
    pub fn call(&self, entry: CallEntry) -> CallId {
        let id = self.next_call.get();
        self.next_call.set(id.wrapping_add(1).max(1) & !ABORT);
        self.calls.borrow_mut().push((id, entry));
        id
    }

    /// Starts call `call`'s send: now, unless it is `large`, this task's
    /// slice is spent (a burst: the engine's operations already wait for
    /// the next task), or a send given before it waits for a later task;
    /// then after the sends before it: sends start in the order they were
    /// given.
    pub fn start_send(
        &self,
        call: CallId,
        large: bool,
        start: impl FnOnce(&mut Engine, i64) + 'static,
    ) {
        let mut later = self.later.borrow_mut();
        let spent = self.slice.get().2;
        if !large && !spent && later.is_empty() {
            drop(later);
            return start(&mut self.engine(), time::now());
        }
        if later.is_empty() {
            next_task(&callback(), self.id, LATER);
        }
        later.push((call, Box::new(start), false));
    }

    /// The sends waiting for a later task start, in order, for up to a
    /// slice ([`SLICE_MS`]; a large one alone); the rest wait for the next.
    fn start_later(&self, now: i64) {
        loop {
            let (call, start, left) = {
                let mut later = self.later.borrow_mut();
                if later.is_empty() {
                    return;
                }
                later.remove(0)
            };
            start(&mut self.engine(), now);
            if left {
                self.engine.borrow_mut().caller_left(now, call);
            }
            if !self.later.borrow().is_empty() && time::now() - now >= SLICE_MS {
                next_task(&callback(), self.id, LATER);
                return;
            }
        }
    }

    /// The caller of call `call` may leave: its signal's abort is reported.
    pub fn on_abort(&self, call: CallId, signal: &JsValue) {
        on_abort(signal, &callback(), self.id, ABORT | call);
    }

    /// Performs what the engine asks, then arms its timer.
    pub fn pump(&self) {
        loop {
            // Freed by a callback of the caller's while this ran: nothing more.
            if self.gone.get() {
                return;
            }
            // The clock is read when a slice begins and every eighth operation.
            match self.slice.get() {
                (_, _, true) => break,
                (Some(start), ops, false) if ops % 8 == 7 && time::now() - start >= SLICE_MS => {
                    self.slice.set((Some(start), ops, true));
                    break;
                }
                _ => {}
            }
            let io = self.engine.borrow_mut().poll_io();
            match io {
                Some(io) => {
                    match self.slice.get() {
                        (None, ..) => {
                            self.slice.set((Some(time::now()), 0, false));
                            next_task(&callback(), self.id, PUMP);
                        }
                        (start, ops, deferred) => self.slice.set((start, ops + 1, deferred)),
                    }
                    self.perform(io)
                }
                None => break,
            }
        }
        let due = self.engine.borrow().poll_timeout();
        let mut timer = self.timer.borrow_mut();
        match due {
            Some(at) if at < timer.0 => {
                clear_timer(&timer.1);
                let ms = (at - time::now()).max(0) as f64;
                *timer = (at, idle_timer(ms, &callback(), self.id, TIMER));
            }
            None if timer.0 != i64::MAX => {
                clear_timer(&timer.1);
                *timer = (i64::MAX, JsValue::UNDEFINED);
            }
            _ => {}
        }
        drop(timer);
        self.forget_if_done();
    }

    /// One wait ended.
    fn complete(&self, tag: u32, ok: bool, value: JsValue) {
        // A new slice: the operations that waited for it are performed.
        if tag == PUMP {
            self.slice.set((None, 0, false));
            return self.pump();
        }
        // A tag of the executor's own names no operation: it finds none.
        let op = OpId::of_tag(tag);
        handling(self.engine.borrow().intent_of(op).unwrap_or_default());
        let now = time::now();
        self.engine.borrow_mut().set_online(is_online());
        if tag == TIMER {
            *self.timer.borrow_mut() = (i64::MAX, JsValue::UNDEFINED);
            self.engine.borrow_mut().handle_timeout(now);
        } else if tag == ANNOUNCED {
            match answers::announced(&plain(value)) {
                Some((id, state)) => self.engine.borrow_mut().handle_announced(now, &id, state),
                None => self.engine.borrow_mut().drop_message(),
            }
        } else if tag == HEARD {
            match answers::heard(&plain(value)) {
                Some((source, from, heard)) => self
                    .engine
                    .borrow_mut()
                    .handle_heard(now, &source, from, heard),
                None => self.engine.borrow_mut().drop_message(),
            }
        } else if tag == ONLINE {
            self.engine.borrow_mut().handle_online(now);
        } else if tag == VISIBLE {
            self.engine.borrow_mut().handle_visible(now);
        } else if tag == SLICES {
            self.settle_slices();
        } else if tag == LATER {
            self.start_later(now);
        } else if tag & ABORT != 0 {
            let call = tag & !ABORT;
            // A send not started yet is told once it has started.
            let mut later = self.later.borrow_mut();
            match later.iter_mut().find(|(c, ..)| *c == call) {
                Some(waiting) => waiting.2 = true,
                None => {
                    drop(later);
                    self.engine.borrow_mut().caller_left(now, call);
                }
            }
        } else if let Some(done) = self.read(op, ok, value) {
            self.engine.borrow_mut().handle(now, op, done);
        }
        self.pump();
    }

    /// Starts `promise`; its end comes back as operation `op`.
    fn wait(&self, op: OpId, promise: &js_sys::Promise, pending: Pending) {
        self.pending.borrow_mut().push((op, pending));
        settled(promise, &callback(), self.id, op.tag());
    }

    fn store_call(&self, op: OpId, method: &str, args: &[JsValue], pending: Pending) {
        let f = safe_read::get(&self.store, method).and_then(|f| safe_read::function(&f));
        let promise = match f {
            Some(f) => {
                let args: js_sys::Array = args.iter().collect();
                f.apply(&self.store, &args)
                    .map(|p| p.unchecked_into())
                    .unwrap_or_else(|e| js_sys::Promise::reject(&e))
            }
            None => js_sys::Promise::reject(&JsValue::from_str(method)),
        };
        self.wait(op, &promise, pending);
    }

    fn ask(
        &self,
        op: OpId,
        f: &Option<js_sys::Function>,
        args: &[&JsValue],
        what: &str,
        pending: Pending,
    ) {
        let promise = match f {
            Some(f) => {
                let args: js_sys::Array = args.iter().copied().collect();
                call_within(f, &JsValue::NULL, &args, self.callbacks.within_ms, what)
            }
            None => js_sys::Promise::resolve(&JsValue::UNDEFINED),
        };
        self.wait(op, &promise, pending);
    }

    fn perform(&self, Io { op, what }: Io) {
        match what {
            Do::Get { key } => self.store_call(op, "get", &[key.into()], Pending::Get),
            Do::List { prefix, only } => {
                self.store_call(op, "list", &[prefix.into()], Pending::List(only))
            }
            Do::Put {
                key,
                text,
                expected,
                flush,
            } => {
                let (key, expected, flush) = (key.into(), (expected as f64).into(), flush.into());
                let args = match &text.hole {
                    // The record's text around its body, and the body's text
                    // as the caller gave it (only a caller's body is held):
                    // the store puts it in.
                    Some((at, body)) => [
                        key,
                        text.text[..*at].into(),
                        expected,
                        flush,
                        text.text[*at..].into(),
                        held(body),
                    ],
                    None => [
                        key,
                        text.text.into(),
                        expected,
                        flush,
                        JsValue::UNDEFINED,
                        JsValue::UNDEFINED,
                    ],
                };
                let given = if text.hole.is_some() { 6 } else { 4 };
                self.store_call(op, "put", &args[..given], Pending::Put)
            }
            Do::Remove { keys } => {
                let keys: js_sys::Array = keys.iter().map(|k| JsValue::from_str(k)).collect();
                self.store_call(op, "remove", &[keys.into()], Pending::Remove)
            }
            Do::Aside { from, to, reason } => self.store_call(
                op,
                "aside",
                &[from.into(), to.into(), reason.into()],
                Pending::Remove,
            ),
            Do::Lock {
                name,
                wait_ms,
                kind,
            } => {
                let promise = match kind {
                    LockKind::Probe => lock_background(&name),
                    LockKind::Intent if wait_ms == 0 => lock_try(&name),
                    _ => lock_wait(&name, wait_ms as f64),
                };
                self.wait(
                    op,
                    &own_lock(&promise, &self.holdings),
                    Pending::Lock { kind, name },
                );
            }
            Do::Unlock { lock } => self.unlock(lock),
            Do::Fetch(request) => self.fetch(op, &request),
            Do::Ask(ask) => self.ask_caller(op, ask),
            Do::Announce(text) => self.channels.announce(&text),
            Do::Post(text) => self.channels.post(&text),
            Do::Listen(on) => self.channels.listen(on, &callback(), self.id, ANNOUNCED),
            Do::Notify(sink, text) => {
                let f = match sink {
                    Sink::Event => &self.callbacks.functions.on_event,
                    Sink::History => &self.callbacks.functions.on_history,
                    Sink::Escalated => &self.callbacks.functions.on_escalated,
                };
                if let Some(f) = f {
                    telemetry_note(f, &text);
                }
            }
            Do::Settle(call, reply) => self.settle(call, reply),
            Do::Emit(call, element) => {
                if let Some((
                    _,
                    CallEntry {
                        settler: Settler::Stream(push, _),
                        ..
                    },
                )) = self.calls.borrow().iter().find(|(c, _)| *c == call)
                {
                    let _ = push.call1(&JsValue::NULL, &to_js(&element));
                }
            }
            Do::Told(call, id) => {
                let f = self
                    .calls
                    .borrow_mut()
                    .iter_mut()
                    .find(|(c, _)| *c == call)
                    .and_then(|(_, e)| {
                        let _ = js_sys::Reflect::set(
                            &e.handle,
                            &"intentId".into(),
                            &JsValue::from_str(&id),
                        );
                        e.on_intent.take()
                    });
                if let Some(f) = f {
                    // The caller's own failure changes nothing.
                    let _ = f.call1(&JsValue::NULL, &id.into());
                }
            }
            Do::WhenOnline => self.wait(op, &when_online(), Pending::Online),
            Do::Destroy => self.store_call(op, "destroy", &[], Pending::Remove),
            Do::Close => {
                // Signed out: the other calls end, and everything held is let go.
                self.freed.set(true);
                self.calls.borrow_mut().clear();
            }
        }
    }

    fn unlock(&self, lock: OpId) {
        let held = {
            let mut locks = self.locks.borrow_mut();
            locks
                .iter()
                .position(|(o, _)| *o == lock)
                .map(|i| locks.swap_remove(i).1)
        };
        match held {
            Some(release) => {
                let _ = release.call0(&JsValue::NULL);
            }
            // Not granted yet: let it go when it is.
            None => self.dropped.borrow_mut().push(lock.tag()),
        }
    }

    fn fetch(&self, op: OpId, r: &Request) {
        let mut headers = String::with_capacity(512);
        for (name, value) in &r.headers {
            if !headers.is_empty() {
                headers.push('\n');
            }
            headers.push_str(name);
            headers.push('\n');
            headers.push_str(value);
        }
        match gateway_fetch(
            &r.url,
            &r.method,
            &headers,
            &r.body,
            r.timeout_ms,
            &self.holdings,
            &r.held.as_ref().map_or(JsValue::UNDEFINED, held),
        ) {
            Ok(promise) => self.wait(op, &promise, Pending::Fetch { stream: r.stream }),
            Err(e) => {
                let failure = Failure::NeverSent(JsFailure::from(e).text());
                self.engine
                    .borrow_mut()
                    .handle(time::now(), op, Done::Failed(failure));
            }
        }
    }

    fn ask_caller(&self, op: OpId, ask: Ask) {
        let c = &self.callbacks.functions;
        match ask {
            Ask::Headers(context) => self.ask(
                op,
                &c.headers,
                &[&js_sys::JSON::parse(&context).unwrap_or(JsValue::NULL)],
                "headers()",
                Pending::Headers,
            ),
            Ask::Confirm(question) => self.ask(
                op,
                &c.confirm,
                &[&super::typed_to_js(&question)],
                "confirm()",
                Pending::Confirm,
            ),
            Ask::ConfirmBatch(questions) => self.ask(
                op,
                &c.confirm_batch,
                &[&super::typed_to_js(&questions)],
                "confirmBatch()",
                Pending::ConfirmBatch,
            ),
            Ask::Downstream { call, question } => {
                let own = self
                    .calls
                    .borrow()
                    .iter()
                    .find(|(c, _)| *c == call)
                    .and_then(|(_, e)| e.check.clone());
                let f = own.or_else(|| c.check_downstream.clone());
                let q = super::typed_to_js(&question);
                self.ask(op, &f, &[&q], "check()", Pending::Check);
            }
        }
    }

    /// Reads what operation `op` ended in; `None` while a stream goes on.
    fn read(&self, op: OpId, ok: bool, value: JsValue) -> Option<Done> {
        let pending = {
            let mut all = self.pending.borrow_mut();
            let i = all.iter().position(|(o, _)| *o == op)?;
            all.swap_remove(i).1
        };
        let store_error =
            |writing: bool| super::storage::unavailable(JsFailure::from(value.clone()), writing);
        Some(match pending {
            Pending::Get if ok => {
                Done::Got(Ok((!value.is_null_or_undefined()).then(|| entry(value))))
            }
            Pending::Get => Done::Got(Err(store_error(false))),
            Pending::List(only) if ok => {
                let mut left = safe_read::elements(&value).unwrap_or_default();
                left.reverse();
                return self.read_listing(op, only, left);
            }
            Pending::Listing { only, left } => return self.read_listing(op, only, left),
            Pending::List(_) => Done::Listed(Err(store_error(false))),
            // `true`: written; otherwise the revision found, if said (asked
            // only then: each question is a call into JS).
            Pending::Put if ok => Done::Put(Ok(if value.as_bool() == Some(true) {
                Swap::Done
            } else {
                Swap::lost(value.as_f64())
            })),
            Pending::Put => Done::Put(Err(store_error(true))),
            Pending::Remove => Done::Removed(if ok { Ok(()) } else { Err(store_error(true)) }),
            Pending::Lock { kind, name } => {
                let locked = if !ok || value.is_undefined() {
                    if kind == LockKind::Scope && ok {
                        // No Web Locks: this process's own lock for a scope's places.
                        let wait =
                            own_lock(&local_lock_wait(&name, f64::from(i32::MAX)), &self.holdings);
                        self.wait(
                            op,
                            &wait,
                            Pending::Lock {
                                kind: LockKind::Intent,
                                name,
                            },
                        );
                        return None;
                    }
                    Locked::Unsupported
                } else if value.is_null_or_undefined() {
                    Locked::Busy
                } else {
                    self.locks.borrow_mut().push((op, value.unchecked_into()));
                    Locked::Held
                };
                let mut dropped = self.dropped.borrow_mut();
                if let Some(i) = dropped.iter().position(|o| *o == op.tag()) {
                    dropped.swap_remove(i);
                    drop(dropped);
                    self.unlock(op);
                    return None;
                }
                drop(dropped);
                Done::Locked(locked)
            }
            Pending::Fetch { .. } | Pending::Body { .. } | Pending::Chunk { .. } if !ok => {
                Done::Failed(failure(value))
            }
            Pending::Fetch { stream } => return self.answered(op, value, stream),
            Pending::Body {
                status,
                error_code,
                retry_after,
            } => {
                let body = match safe_read::get(&value, "value") {
                    Some(v) if !v.is_undefined() => super::json_from_js(v).map_err(|e| e.message),
                    _ => Err(safe_read::get(&value, "reason")
                        .and_then(|r| r.as_string())
                        .unwrap_or_default()),
                };
                Done::Answered {
                    status,
                    error_code,
                    retry_after,
                    body,
                }
            }
            Pending::Chunk {
                reader,
                mut decoder,
                mut read,
            } => {
                let done = safe_read::get(&value, "done")
                    .and_then(|d| d.as_bool())
                    .unwrap_or(true);
                if done {
                    return Some(Done::StreamEnded {
                        cut: decoder.finish().is_err(),
                    });
                }
                let text = safe_read::get(&value, "value")
                    .and_then(|v| v.as_string())
                    .unwrap_or_default();
                read += text.len();
                // Past maxAnswerBytes the stream is read no further: cut, its outcome unknown.
                let limit = self.engine.borrow().config().max_answer_bytes as usize;
                let cut = read > limit
                    || decoder.push_text(&text).is_err()
                    || !self.elements(op, &mut decoder);
                if cut {
                    let _ = reader.cancel();
                    return Some(Done::StreamEnded { cut: true });
                }
                self.wait(
                    op,
                    &reader.read(),
                    Pending::Chunk {
                        reader,
                        decoder,
                        read,
                    },
                );
                return None;
            }
            Pending::Headers => Done::Headers(if ok {
                answers::headers(&plain(value))
            } else {
                Err(JsFailure::from(value).text())
            }),
            Pending::Confirm => Done::Confirmed(if ok {
                answers::confirmed(&plain(value))
            } else {
                ConfirmAnswer::Unavailable(JsFailure::from(value).text())
            }),
            Pending::ConfirmBatch => Done::Looked(if ok {
                answers::confirmed_batch(&plain(value))
            } else {
                LookAnswer::Unavailable(JsFailure::from(value).text())
            }),
            Pending::Check => Done::Checked(ok && value.as_bool() == Some(true)),
            Pending::Online => Done::Online,
        })
    }

    /// Hands each stage element the decoder holds to the engine; false
    /// when one cannot be read (the stream cannot be trusted further).
    fn elements(&self, op: OpId, decoder: &mut SseDecoder) -> bool {
        while let Some(event) = decoder.next_event() {
            match StreamElement::from_event(event.event.as_deref(), body_from_text(&event.data)) {
                Ok(element) => {
                    self.engine
                        .borrow_mut()
                        .handle(time::now(), op, Done::Element(element))
                }
                Err(_) => return false,
            }
        }
        true
    }

    /// A response came (gloo-net reads it): a stage stream is read chunk
    /// by chunk, any other answer's body is parsed once.
    fn answered(&self, op: OpId, response: JsValue, stream: bool) -> Option<Done> {
        let raw: web_sys::Response = response.unchecked_into();
        let response = gloo_net::http::Response::from(Clone::clone(&raw));
        let headers = response.headers();
        if stream
            && crate::core::protocol::headers::is_event_stream(
                headers.get("Content-Type").as_deref(),
            )
        {
            let Some(body) = raw.body() else {
                return Some(Done::StreamEnded { cut: true });
            };
            let reader = text_reader(&body);
            self.wait(
                op,
                &reader.read(),
                Pending::Chunk {
                    reader,
                    decoder: Box::default(),
                    read: 0,
                },
            );
            return None;
        }
        let status = response.status();
        let error_code = headers.get(crate::core::protocol::headers::names::ERROR_CODE);
        let retry_after =
            crate::core::protocol::headers::retry_after_ms(headers.get("Retry-After").as_deref());
        self.wait(
            op,
            &read_json_body(&raw, self.engine.borrow().config().max_answer_bytes),
            Pending::Body {
                status,
                error_code,
                retry_after,
            },
        );
        None
    }

    /// Reads a listing's entries into the module for up to [`SLICE_MS`],
    /// and hands them to the engine as a part; the rest in the next task,
    /// until none is left: the listing's last part.
    fn read_listing(
        &self,
        op: OpId,
        only: Option<(String, String)>,
        mut left: Vec<JsValue>,
    ) -> Option<Done> {
        let start = time::now();
        let mut read = Vec::new();
        // The clock is looked at every 16 entries looked at (kept or not:
        // a listing whose entries are mostly another's is sliced too).
        let mut looked = 0u32;
        while let Some(pair) = left.pop() {
            read.extend(listed(&pair, &only));
            looked += 1;
            if looked % 16 == 0 && time::now() - start >= SLICE_MS && !left.is_empty() {
                self.pending
                    .borrow_mut()
                    .push((op, Pending::Listing { only, left }));
                next_task(&callback(), self.id, op.tag());
                return Some(Done::ListedPart(read));
            }
        }
        Some(Done::Listed(Ok(read)))
    }

    /// Call `call` ends with `reply`.
    fn settle(&self, call: CallId, reply: Reply) {
        let entry = {
            let mut calls = self.calls.borrow_mut();
            let Some(i) = calls.iter().position(|(c, _)| *c == call) else {
                return;
            };
            calls.swap_remove(i).1
        };
        match reply {
            Reply::Records(mut records) if records.len() > SLICE_RECORDS => {
                records.reverse();
                let first = self.settling.borrow().is_empty();
                self.settling
                    .borrow_mut()
                    .push((entry, records, js_sys::Array::new()));
                if first {
                    next_task(&callback(), self.id, SLICES);
                }
            }
            reply => (self.settle)(&entry, reply),
        }
    }

    /// Makes the records of the first call settling with many into JS for
    /// up to [`SLICE_MS`], [`SLICE_RECORDS`] at a time, the rest in the next
    /// task; once none is left, resolves it with them.
    fn settle_slices(&self) {
        let start = time::now();
        let mut settling = self.settling.borrow_mut();
        let Some((_, left, out)) = settling.first_mut() else {
            return;
        };
        while !left.is_empty() && time::now() - start < SLICE_MS {
            let slice: Vec<IntentRecord> = (0..SLICE_RECORDS).map_while(|_| left.pop()).collect();
            // Our own JSON text's array.
            for record in to_js(&slice).unchecked_into::<js_sys::Array>().iter() {
                out.push(&record);
            }
        }
        let done = left.is_empty().then(|| settling.remove(0));
        if !settling.is_empty() {
            next_task(&callback(), self.id, SLICES);
        }
        drop(settling);
        if let Some((
            CallEntry {
                settler: Settler::Promise(resolve, _),
                ..
            },
            _,
            out,
        )) = done
        {
            let _ = resolve.call1(&JsValue::NULL, &out);
        }
    }

    /// `client.history`.
    pub fn history(&self) -> JsValue {
        to_js(&self.engine.borrow().history())
    }

    /// The client was freed. By `free()` (`[Symbol.dispose]`), it lets go
    /// of everything at once, as a stopped instance does: its calls end
    /// (`ClientFreed`), its locks are let go (another tab or the next client
    /// drives its intents, confirming first), its requests are aborted, its
    /// channels and listeners stop. By its finalizer (the app dropped the
    /// client, perhaps still awaiting a call), it does so once its calls
    /// have ended as they would.
    pub fn free(&self) {
        self.freed.set(true);
        if freeing() {
            self.calls.borrow_mut().clear();
        }
        self.forget_if_done();
    }

    /// A freed client is gone once its calls have ended.
    fn forget_if_done(&self) {
        if !self.freed.get()
            || self.gone.get()
            || !self.calls.borrow().is_empty()
            || !self.settling.borrow().is_empty()
        {
            return;
        }
        self.gone.set(true);
        let_go_of(&self.holdings);
        self.locks.borrow_mut().clear();
        self.pending.borrow_mut().clear();
        clear_timer(&self.timer.borrow().1);
        let id = self.id;
        EXECUTORS.with(|all| all.borrow_mut().retain(|e| e.id != id));
    }
}

/// A body's text as the caller gave it ([`caller_body`](super::caller_body)).
fn held(body: &Body) -> JsValue {
    body.held_text()
        .and_then(|h| h.downcast_ref::<JsValue>())
        .cloned()
        .unwrap_or_default()
}

/// What a request's rejection means: its deadline, or a lost connection.
fn failure(e: JsValue) -> Failure {
    let f = JsFailure::from(e);
    Failure::of_rejection(&f.name, f.text())
}

/// A stored value (JSON text, or the object IndexedDB keeps) as a record.
/// One `[key, value]` of a listing, read; `None` if it is not one, or is
/// held as an object (IndexedDB's) whose field `only` names is another
/// (another scope's, skipped before it crosses into the module).
fn listed(
    pair: &JsValue,
    only: &Option<(String, String)>,
) -> Option<(String, Result<IntentRecord, RecordError>)> {
    let pair = safe_read::elements(pair)?;
    let value = pair.get(1)?;
    if let Some((field, want)) = only {
        let other = value.is_object()
            && safe_read::get(value, field)
                .and_then(|v| v.as_string())
                .as_deref()
                != Some(want.as_str());
        if other {
            return None;
        }
    }
    Some((pair.first()?.as_string()?, entry(value.clone())))
}

fn entry(value: JsValue) -> Result<IntentRecord, RecordError> {
    super::storage::record_from_stored(value)
}

/// A value answered (a callback's, another tab's message) as plain JSON;
/// one JSON cannot carry is `false`, a shape no reader asks for
/// ([`answers`] reads it as a wrong answer).
fn plain(value: JsValue) -> JsonValue {
    super::json_from_js(value).unwrap_or(JsonValue::Bool(false))
}

/// A stream event's data read with `JSON.parse` and decoded without serde_json.
fn body_from_text(text: &str) -> crate::core::protocol::ResponseBody {
    use crate::core::protocol::ResponseBody;
    match js_sys::JSON::parse(text) {
        Ok(value) => match super::json_from_js(value) {
            Ok(json) => ResponseBody::from_json(json),
            Err(e) => ResponseBody::Other { reason: e.message },
        },
        Err(e) => {
            let mut end = text.len().min(120);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            ResponseBody::Other {
                reason: text!("not JSON (", JsFailure::from(e).text(), "): ", &text[..end]),
            }
        }
    }
}
