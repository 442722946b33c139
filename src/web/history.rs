//! Runs the core's [`HistoryGate`] for one client: its looks (the gateway's
//! event queries, or the caller's confirmer), its timer, and, across the
//! tabs and workers that share the namespace, one probe while history is
//! down: the gate that holds the probe's Web Lock looks, and tells the
//! others what it found (BroadcastChannel); they wait on its word instead
//! of each polling.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};

use crate::core::machine::{Availability, ConfirmAnswer, GateConfig, HistoryGate, Look, Ticket};
use crate::core::protocol::{ConfirmQuery, JsonOut, ObjectWriter};
use crate::core::text::text;
use wasm_bindgen::prelude::*;

use super::channel::{history_channel_name, Announcer, Listener};
use super::driver::Client;
use super::locks::{self, IntentLock, LockAttempt};
use super::{random::random_u64, safe_read, time};

#[wasm_bindgen(module = "/src/web/telemetry.js")]
extern "C" {
    #[wasm_bindgen(js_name = telemetryNote)]
    fn telemetry_note(sink: &js_sys::Function, event: &str);
}

/// What the journal does for the probe (`js::client` sets them): `look_for`
/// asks about the intents waiting at rest (escalated) when a look is due
/// and no drive is asking; `back` drives them once history answers again.
#[derive(Clone, Copy)]
pub struct Hooks {
    /// Asks the gate about every intent waiting at rest.
    pub look_for: fn(Rc<Client>),
    /// Drives what waited, confirm first.
    pub back: fn(Rc<Client>),
}

/// The gate of one client (one namespace and confirm source).
pub struct History {
    gate: RefCell<HistoryGate>,
    slots: RefCell<Vec<(Ticket, Rc<Slot>)>>,
    client: RefCell<Weak<Client>>,
    hooks: Cell<Option<Hooks>>,
    /// Tabs and workers of the namespace hear each other's looks under
    /// this name: the gateway's URL, or `confirm` for a caller's confirmer.
    source: String,
    /// This gate's own messages, told apart from the others'.
    me: u64,
    /// Whether this gate leads the probe: it holds the probe's lock (kept
    /// here), or there are no Web Locks and each process leads its own.
    leading: Cell<bool>,
    probe: RefCell<Option<IntentLock>>,
    probing: Cell<bool>,
    /// An intent escalated here waits on the probe.
    parked: Cell<bool>,
    /// When the timer set last fires (a timer that finds another time here
    /// was replaced).
    timer_at: Cell<i64>,
    /// Its ear and its voice on the namespace's probe channel.
    channel: RefCell<Option<(Listener, Announcer)>>,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("History")
    }
}

impl History {
    /// A gate asking `source` (the gateway's URL, or `confirm`), `batch`
    /// questions a look (1 for a confirmer that takes one at a time); it
    /// works once [`History::attach`] gives it its client.
    pub fn new(source: String, batch: usize) -> Rc<History> {
        let config = GateConfig {
            batch,
            ..GateConfig::default()
        };
        Rc::new(History {
            gate: RefCell::new(HistoryGate::new(config, random_u64())),
            slots: RefCell::default(),
            client: RefCell::default(),
            hooks: Cell::new(None),
            source,
            me: random_u64() >> 11,
            leading: Cell::new(false),
            probe: RefCell::default(),
            probing: Cell::new(false),
            parked: Cell::new(false),
            timer_at: Cell::new(i64::MAX),
            channel: RefCell::default(),
        })
    }

    /// Gives the gate its client, the journal's hooks, and its ear on the
    /// namespace's channel.
    pub fn attach(self: &Rc<Self>, client: &Rc<Client>, hooks: Hooks) {
        *self.client.borrow_mut() = Rc::downgrade(client);
        self.hooks.set(Some(hooks));
        let weak = Rc::downgrade(self);
        let name = history_channel_name(client.journal.namespace());
        let ear = Listener::open(&name, move |m| {
            if let Some(me) = weak.upgrade() {
                me.hear(&m);
            }
        });
        *self.channel.borrow_mut() = Some((ear, Announcer::on(&name)));
    }

    /// History's word on `query`'s intent, whose last attempt was sent at
    /// `not_before`: from the next look, or at once from a look made since
    /// (or, while history is down, that it does not answer); `now`: asked
    /// by a person, looked at now.
    pub async fn ask(
        self: &Rc<Self>,
        query: ConfirmQuery,
        need_facts: bool,
        not_before: i64,
        now: bool,
    ) -> ConfirmAnswer {
        let at = time::now();
        let ticket = if now {
            self.gate
                .borrow_mut()
                .ask_now(at, query, need_facts, not_before)
        } else {
            self.gate
                .borrow_mut()
                .ask(at, query, need_facts, not_before)
        };
        let slot = Rc::new(Slot::default());
        self.slots.borrow_mut().push((ticket, slot.clone()));
        self.pump();
        Answered(slot).await
    }

    /// Asks about `queries` without waiting for the answers (the intents
    /// waiting at rest: a look's answers serve their drives after it).
    pub fn note(self: &Rc<Self>, queries: Vec<ConfirmQuery>) {
        let now = time::now();
        for query in queries {
            self.gate.borrow_mut().note(now, query, true);
        }
        self.pump();
    }

    /// An intent escalated here: the probe looks for it until history answers.
    pub fn park(self: &Rc<Self>) {
        self.parked.set(true);
        self.pump();
    }

    /// Looks at once if history is down (online again, visible, `resume()`,
    /// `confirm()`).
    pub fn wake(self: &Rc<Self>) {
        self.gate.borrow_mut().wake(time::now());
        self.pump();
    }

    /// `client.history`: whether history answers, as this client knows it.
    pub fn status(&self) -> JsValue {
        let gate = self.gate.borrow();
        super::object_to_js(|w| {
            availability(
                w.put("waiting", &(gate.waiting() as u32)),
                gate.availability(),
            )
            .done()
        })
    }

    /// Starts what is due, hands each answer to its asker, and keeps the
    /// probe's lock and timer in step with the gate.
    fn pump(self: &Rc<Self>) {
        let now = time::now();
        loop {
            let Some(look) = self.gate.borrow_mut().poll_look(now) else {
                break;
            };
            let me = self.clone();
            crate::js::spawn(async move { me.run(look).await });
        }
        self.deliver();
        let gate = self.gate.borrow();
        let down = gate.availability() != Availability::Up;
        let work = gate.waiting() > 0 || self.parked.get();
        let due = gate.poll_timeout();
        drop(gate);
        if !(down && work) {
            // Nothing to look for, or history answers: the probe is free.
            self.probe.borrow_mut().take();
            self.leading.set(false);
            self.gate.borrow_mut().lead(!down);
        } else if !self.leading.get() && !self.probing.replace(true) {
            self.gate.borrow_mut().lead(false);
            let name = text!(
                "wow-command-client/",
                self.namespace(),
                "/history/",
                self.source
            );
            let me = Rc::downgrade(self);
            crate::js::spawn(async move {
                let held = locks::wait_forever(&name).await;
                // A client freed meanwhile lets the lock go at once.
                let Some(me) = me.upgrade() else { return };
                me.probing.set(false);
                match held {
                    LockAttempt::Held(lock) => *me.probe.borrow_mut() = Some(lock),
                    // Not granted in 24 days: asked again at the next pump.
                    LockAttempt::Busy => return,
                    // Without Web Locks, each process leads its own gate.
                    LockAttempt::Unsupported => {}
                }
                me.leading.set(true);
                me.gate.borrow_mut().lead(true);
                me.pump();
            });
        }
        if let Some(at) = due.filter(|at| *at < self.timer_at.get()) {
            self.timer_at.set(at);
            let me = Rc::downgrade(self);
            crate::js::spawn(async move {
                time::idle(at - time::now()).await;
                let Some(me) = me.upgrade().filter(|me| me.timer_at.get() == at) else {
                    return;
                };
                me.timer_at.set(i64::MAX);
                let client = me.client.borrow().upgrade();
                match (client, me.hooks.get()) {
                    // Due, and no drive is asking: look for what waits at rest.
                    (Some(client), Some(hooks))
                        if me.gate.borrow().waiting() == 0 && me.parked.replace(false) =>
                    {
                        (hooks.look_for)(client)
                    }
                    _ => me.pump(),
                }
            });
        }
    }

    /// Hands each answer to its asker, saying since when history is down
    /// and when it is looked at next.
    fn deliver(&self) {
        let down = match self.gate.borrow().availability() {
            Availability::Down {
                since,
                next_look_at,
                ..
            } => text!(
                "; history unavailable since ",
                iso(since),
                ", next look at ",
                iso(next_look_at)
            ),
            Availability::Up => String::new(),
        };
        loop {
            let Some((ticket, answer)) = self.gate.borrow_mut().poll_answer() else {
                break;
            };
            let mut slots = self.slots.borrow_mut();
            let Some(i) = slots.iter().position(|(t, _)| *t == ticket) else {
                continue;
            };
            let (_, slot) = slots.swap_remove(i);
            drop(slots);
            slot.fill(match answer {
                ConfirmAnswer::Unavailable(why) => ConfirmAnswer::Unavailable(why + &down),
                answer => answer,
            });
        }
    }

    /// One look, then what it found.
    async fn run(self: Rc<Self>, look: Look) {
        let client = self.client.borrow().upgrade();
        let answer = match &client {
            Some(client) => client.look(&look).await,
            None => return,
        };
        let was = self.gate.borrow().availability();
        self.gate
            .borrow_mut()
            .handle_look(time::now(), look.id, answer);
        let is = self.gate.borrow().availability();
        if is != Availability::Up || was != Availability::Up {
            // The other tabs and workers hear it: `{history: {source, from, available, …}}`.
            let mut message = JsonOut::new(super::engine_number_text);
            let mut w = ObjectWriter::new(&mut message);
            w.put("history", &true)
                .put("source", &self.source)
                .put("from", &self.me);
            availability(&mut w, is).done();
            if let Some((_, voice)) = &*self.channel.borrow() {
                voice.post(&message.text);
            }
            self.changed(was, is, false);
        }
        self.pump();
    }

    fn namespace(&self) -> String {
        self.client
            .borrow()
            .upgrade()
            .map(|c| c.journal.namespace().to_owned())
            .unwrap_or_default()
    }

    /// Another tab's or worker's word on its look.
    fn hear(self: &Rc<Self>, message: &JsValue) {
        let get = |k: &str| safe_read::get(message, k).unwrap_or(JsValue::UNDEFINED);
        if get("history").as_bool() != Some(true)
            || get("source").as_string().as_deref() != Some(self.source.as_str())
            || get("from").as_f64() == Some(self.me as f64)
        {
            return;
        }
        let number = |k: &str| get(k).as_f64().unwrap_or(0.0) as i64;
        let heard = match get("available").as_bool() {
            Some(true) => Availability::Up,
            Some(false) => Availability::Down {
                since: number("since"),
                next_look_at: number("nextLookAt"),
                failures: number("failures") as u32,
            },
            None => return,
        };
        let was = self.gate.borrow().availability();
        self.gate.borrow_mut().heard(heard);
        if was != Availability::Up && heard == Availability::Up {
            self.changed(was, heard, true);
        }
        self.pump();
    }

    /// `onHistory` (`historyDown` after each failed look, `historyBack` once
    /// one is answered), and what waited here at rest is driven when
    /// history is back (under its locks: another tab may drive it first).
    fn changed(&self, was: Availability, is: Availability, heard: bool) {
        let client = self.client.borrow().upgrade();
        let Some(client) = client else { return };
        if let Some(sink) = &client.on_history {
            let mut event = JsonOut::new(super::engine_number_text);
            let mut w = ObjectWriter::new(&mut event);
            w.put("version", &1u32)
                .put("at", &time::now())
                .put("waiting", &(self.gate.borrow().waiting() as u32));
            match (was, is) {
                (Availability::Down { since, .. }, Availability::Up) => w
                    .put("kind", &"historyBack")
                    .put("available", &true)
                    .put("since", &since)
                    .done(),
                _ => availability(w.put("kind", &"historyDown"), is).done(),
            }
            telemetry_note(sink, &event.text);
        }
        if is == Availability::Up && self.parked.replace(false) {
            let Some(hooks) = self.hooks.get() else {
                return;
            };
            if !heard {
                return (hooks.back)(client);
            }
            // The tab whose look found history back drives what waited
            // first, from its look's answers; this one then finds those
            // settled and asks history only about what is left.
            crate::js::spawn(async move {
                time::idle(HEARD_BACK_MS).await;
                (hooks.back)(client)
            });
        }
    }
}

/// How long a tab that heard history is back waits before driving what
/// waited on it (the tab that looked drives it meanwhile).
const HEARD_BACK_MS: i64 = 2_000;

/// An availability's fields: `available`, and while history is down
/// `since`, `nextLookAt` and `failures`.
fn availability<'w, 'a>(w: &'w mut ObjectWriter<'a>, a: Availability) -> &'w mut ObjectWriter<'a> {
    match a {
        Availability::Up => w.put("available", &true),
        Availability::Down {
            since,
            next_look_at,
            failures,
        } => w
            .put("available", &false)
            .put("since", &since)
            .put("nextLookAt", &next_look_at)
            .put("failures", &failures),
    }
}

/// An epoch time as ISO 8601 text (the engine's `toISOString`).
fn iso(ms: i64) -> String {
    js_sys::Date::new(&JsValue::from_f64(ms as f64))
        .to_iso_string()
        .into()
}

/// Where one question's answer is left for its asker.
#[derive(Default)]
struct Slot {
    answer: RefCell<Option<ConfirmAnswer>>,
    waker: RefCell<Option<Waker>>,
}

impl Slot {
    fn fill(&self, answer: ConfirmAnswer) {
        *self.answer.borrow_mut() = Some(answer);
        if let Some(waker) = self.waker.borrow_mut().take() {
            waker.wake();
        }
    }
}

/// The asker's wait for its slot.
struct Answered(Rc<Slot>);

impl Future for Answered {
    type Output = ConfirmAnswer;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ConfirmAnswer> {
        match self.0.answer.borrow_mut().take() {
            Some(answer) => Poll::Ready(answer),
            None => {
                *self.0.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
