//! Confirmation at scale: every intent of a namespace that needs history's
//! word asks this gate, not history itself. Questions asked at the same
//! moment go out together, one query per route; while history is down a
//! single probe, with jittered exponential backoff to a cap, decides when it
//! is back, and every question waits for its next look instead of each
//! polling. A failed look is every waiting question's failed try: n
//! intents cost one query a look, however large n is.
//!
//! Sans-IO like [`IntentMachine`](super::IntentMachine): time comes in as
//! `now`, looks go out as values.
//!
//! # Call order
//!
//! ```text
//! let mut gate = HistoryGate::new(GateConfig::default(), seed);
//! let ticket = gate.ask(now, query, need_facts, not_before); // a drive's
//! gate.note(now, query, need_facts);                          // the probe's
//! loop {
//!     while let Some(look) = gate.poll_look(now) { /* ask history */ }
//!     //   its answer           → handle_look(now, look.id, answer)
//!     //   another tab's look   → heard(availability)
//!     //   online, visible, resume() → wake(now)
//!     //   poll_timeout() reached → poll_look again
//!     while let Some((ticket, answer)) = gate.poll_answer() { /* deliver */ }
//! }
//! ```
//!
//! The rules of DESIGN rule 4 do not move: "not appended" is only ever what a
//! complete answer of history said about that very intent (its aggregate id
//! *and* its requestId), in a look made after its last attempt was sent;
//! a stream that names neither is no evidence; a question history could not
//! answer is told so, and the machine decides (retry the look, or escalate).

use super::backoff::{backoff_ms, Jitter};
use super::intent_machine::ConfirmAnswer;
use crate::protocol::ConfirmQuery;

/// The probe's timing and the batch size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateConfig {
    /// The pause before the first look after a failed one (doubling, equal jitter).
    pub base_ms: u64,
    /// The longest pause between looks while history is down: how late,
    /// at most, a client notices that it is back.
    pub cap_ms: u64,
    /// Questions per look: Wow's query guard takes at most 1,000 values in
    /// an `IN` list and a limit of at most 1,000. A confirmer that takes one
    /// question at a time has 1.
    pub batch: usize,
    /// How long a drive's question waits for the next look while history
    /// is down: a blip is looked through, a longer outage is told at once.
    pub wait_ms: u64,
    /// How late the leading tab's look may be before a gate that does not
    /// lead makes it itself: a look's own timeout and a margin. A leader
    /// that is gone, frozen or unheard (a lost message, a lock that never
    /// comes) costs the questions waiting here this pause, never their answer.
    pub overdue_ms: u64,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            base_ms: 1_000,
            cap_ms: 30_000,
            batch: MAX_BATCH,
            wait_ms: 5_000,
            overdue_ms: 31_000,
        }
    }
}

/// The most questions one look carries (the query guard's limits).
pub(crate) const MAX_BATCH: usize = 1_000;

/// How long a look's answers serve questions asked after it (the intents
/// a look found, driven right after it): a minute.
const FRESH_MS: i64 = 60_000;

/// Whether history answers, as this client last learned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Availability {
    /// The last look was answered.
    Up,
    /// Looks fail: since the first failed one, `failures` in a row; the
    /// next is due at `next_look_at`.
    Down {
        /// When the first failed look ended.
        since: i64,
        /// When the next look is due.
        next_look_at: i64,
        /// Failed looks in a row.
        failures: u32,
    },
}

/// Who asks: a drive (told at once while history is down, unless a look
/// is due), a person (looked at now), or the probe (waits for its look).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asking {
    Drive,
    Person,
    Probe,
}

/// A question's handle: its answer comes back with it.
pub(crate) type Ticket = u64;

/// One look at history: questions of one route (one event-list path).
#[derive(Clone, Debug, PartialEq)]
pub struct Look {
    /// Its id, for `HistoryGate::handle_look`.
    pub id: u64,
    /// The questions, at most [`GateConfig::batch`], all of one route.
    pub questions: Vec<ConfirmQuery>,
    /// With one question: whether its stream's version and commandId are
    /// wanted (a list query rather than a count). A batch is always a list.
    pub need_facts: bool,
}

/// History's word on one intent, naming it (both ids must match the
/// question's: a stream of another aggregate with the same requestId is
/// not about it).
#[derive(Clone, Debug, PartialEq)]
pub struct Said {
    /// The intent's aggregate.
    pub aggregate_id: String,
    /// Its requestId.
    pub request_id: String,
    /// What history says of it.
    pub answer: ConfirmAnswer,
}

/// What a look learned.
#[derive(Clone, Debug, PartialEq)]
pub enum LookAnswer {
    /// History answered: what it said, by intent. `complete`: it named
    /// every intent it holds a stream of (the gateway's whole list), so a
    /// question it does not name was not appended; otherwise (a
    /// confirmer's answer, a list cut at its limit) such a question was
    /// not answered.
    Said {
        /// What it said.
        said: Vec<Said>,
        /// Whether a question it does not name was not appended.
        complete: bool,
    },
    /// History could not be asked.
    Unavailable(String),
}

#[derive(Clone, Debug)]
struct Question {
    ticket: Ticket,
    query: ConfirmQuery,
    need_facts: bool,
    route: String,
    /// Asked by a person (`confirm()`): looked at now, whatever the gate knows.
    urgent: bool,
    /// The look it is in, while that look runs.
    look: Option<u64>,
}

#[derive(Clone, Debug)]
struct Fresh {
    aggregate_id: String,
    request_id: String,
    answer: ConfirmAnswer,
    at: i64,
}

/// The gate of one namespace and confirm source.
#[derive(Debug)]
pub(crate) struct HistoryGate {
    config: GateConfig,
    jitter: Jitter,
    availability: Availability,
    questions: Vec<Question>,
    /// Answers not yet polled, newest last.
    answers: Vec<(Ticket, ConfirmAnswer)>,
    fresh: Vec<Fresh>,
    next_ticket: Ticket,
    next_look: u64,
    /// Whether this gate looks while history is down (it holds the probe
    /// across tabs); it always looks while history is up.
    leads: bool,
    /// Why the last look failed: what a question told at once hears.
    last_why: String,
    /// The latest look another tab said it makes next, while history is
    /// down: the leader's word is overdue only after it.
    heard_next: i64,
}

impl HistoryGate {
    /// A gate that believes history is up; `seed` seeds the jitter.
    pub fn new(config: GateConfig, seed: u64) -> HistoryGate {
        HistoryGate {
            config,
            jitter: Jitter::new(seed),
            availability: Availability::Up,
            questions: Vec::new(),
            answers: Vec::new(),
            fresh: Vec::new(),
            next_ticket: 1,
            next_look: 1,
            leads: true,
            last_why: String::new(),
            heard_next: i64::MIN,
        }
    }

    /// Whether history answers, as far as this gate knows.
    pub(crate) fn availability(&self) -> Availability {
        self.availability
    }

    /// Questions waiting for an answer (in a running look or not).
    pub fn waiting(&self) -> usize {
        self.questions.len()
    }

    /// A drive asks whether `query`'s intent was appended. `not_before`:
    /// when its last attempt was sent; a look made before it says nothing
    /// about that attempt. The answer comes from
    /// [`poll_answer`](Self::poll_answer): from the next look; at once when
    /// a look made since had it, or when the question cannot be asked; and
    /// at once while history is down and its next look is more than
    /// [`GateConfig::wait_ms`] away: the intent counts a failed try without
    /// a query, and once escalated waits at rest for the probe
    /// ([`note`](Self::note)).
    pub fn ask(
        &mut self,
        now: i64,
        query: ConfirmQuery,
        need_facts: bool,
        not_before: i64,
    ) -> Ticket {
        self.question(now, query, need_facts, not_before, Asking::Drive)
    }

    /// A person asks (`confirm()`): the question is looked at now, even
    /// while history is down and by a gate that does not lead the probe.
    pub(crate) fn ask_now(
        &mut self,
        now: i64,
        query: ConfirmQuery,
        need_facts: bool,
        not_before: i64,
    ) -> Ticket {
        self.question(now, query, need_facts, not_before, Asking::Person)
    }

    /// The probe asks about an intent waiting at rest: the question waits
    /// for the next look, whatever history's state.
    pub(crate) fn note(&mut self, now: i64, query: ConfirmQuery, need_facts: bool) -> Ticket {
        self.question(now, query, need_facts, 0, Asking::Probe)
    }

    fn question(
        &mut self,
        now: i64,
        query: ConfirmQuery,
        need_facts: bool,
        not_before: i64,
        asking: Asking,
    ) -> Ticket {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let route = match query.route.event_list_path() {
            Ok(route) => route,
            Err(e) => {
                self.answers
                    .push((ticket, ConfirmAnswer::Unavailable(e.message())));
                return ticket;
            }
        };
        self.fresh.retain(|f| now - f.at < FRESH_MS);
        let known = self.fresh.iter().position(|f| {
            f.aggregate_id == query.aggregate_id
                && f.request_id == query.request_id
                && f.at >= not_before
                && (!need_facts || has_facts(&f.answer))
        });
        if let Some(i) = known {
            let fresh = self.fresh.swap_remove(i);
            self.answers.push((ticket, fresh.answer));
            return ticket;
        }
        if let Availability::Down { next_look_at, .. } = self.availability {
            let soon = next_look_at.saturating_sub(now) <= self.config.wait_ms as i64;
            if asking == Asking::Drive && !soon {
                let why = ConfirmAnswer::Unavailable(self.last_why.clone());
                self.answers.push((ticket, why));
                return ticket;
            }
        }
        self.questions.push(Question {
            ticket,
            query,
            need_facts,
            route,
            urgent: asking == Asking::Person,
            look: None,
        });
        ticket
    }

    /// The next answer to deliver.
    pub(crate) fn poll_answer(&mut self) -> Option<(Ticket, ConfirmAnswer)> {
        (!self.answers.is_empty()).then(|| self.answers.remove(0))
    }

    /// The next look to make now, if any. While history is up, one per
    /// route at a time: questions asked while a look of their route runs go
    /// together in the next. While it is down, one in all, when it is due,
    /// and only by the gate that leads.
    pub(crate) fn poll_look(&mut self, now: i64) -> Option<Look> {
        let qs = &self.questions;
        let running = |route: Option<&str>| {
            qs.iter()
                .any(|q| q.look.is_some() && route.is_none_or(|r| q.route == r))
        };
        let first = match self.availability {
            // A person's question goes now; the rest when the probe's look is due.
            Availability::Down { .. } if running(None) => return None,
            Availability::Down { next_look_at, .. } if now < self.due(next_look_at) => {
                qs.iter().position(|q| q.look.is_none() && q.urgent)?
            }
            Availability::Down { .. } => qs.iter().position(|q| q.look.is_none())?,
            Availability::Up => qs
                .iter()
                .position(|q| q.look.is_none() && !running(Some(&q.route)))?,
        };
        let id = self.next_look;
        self.next_look += 1;
        let route = self.questions[first].route.clone();
        let mut questions = Vec::new();
        let mut need_facts = false;
        for q in self.questions[first..].iter_mut() {
            if questions.len() == self.config.batch.max(1) {
                break;
            }
            if q.look.is_none() && q.route == route {
                q.look = Some(id);
                need_facts |= q.need_facts;
                questions.push(q.query.clone());
            }
        }
        Some(Look {
            id,
            questions,
            need_facts,
        })
    }

    /// When the next look is due while history is down, unless one is
    /// running (its answer sets the next): for the gate that leads, at
    /// `next_look_at`; for the others, which wait to hear the leader's,
    /// once it is overdue and only while a question waits here.
    pub fn poll_timeout(&self) -> Option<i64> {
        match self.availability {
            Availability::Down { next_look_at, .. }
                if (self.leads || !self.questions.is_empty())
                    && self.questions.iter().all(|q| q.look.is_none()) =>
            {
                Some(self.due(next_look_at))
            }
            _ => None,
        }
    }

    /// While history is down, when a gate that does not lead makes the
    /// leader's look itself (it is overdue).
    pub(crate) fn overdue_at(&self) -> Option<i64> {
        match self.availability {
            Availability::Down { next_look_at, .. } => Some(self.overdue(next_look_at)),
            Availability::Up => None,
        }
    }

    /// When this gate makes the look due at `next_look_at`: then if it
    /// leads, once the leader's is overdue if not.
    fn due(&self, next_look_at: i64) -> i64 {
        if self.leads {
            next_look_at
        } else {
            self.overdue(next_look_at)
        }
    }

    /// The leader's look, due at `next_look_at` or at the latest one it
    /// announced, has not been heard of `overdue_ms` after it.
    fn overdue(&self, next_look_at: i64) -> i64 {
        next_look_at
            .max(self.heard_next)
            .saturating_add(self.config.overdue_ms as i64)
    }

    /// The answer to look `id`.
    pub(crate) fn handle_look(&mut self, now: i64, id: u64, answer: LookAnswer) {
        let (said, complete) = match answer {
            LookAnswer::Unavailable(why) => {
                self.failed(now);
                self.last_why = why.clone();
                // History is down for every question waiting, not only this look's.
                return self.fail(Some(id), &why);
            }
            LookAnswer::Said { said, complete } => (said, complete),
        };
        self.availability = Availability::Up;
        self.heard_next = i64::MIN;
        let mut i = 0;
        while i < self.questions.len() {
            if self.questions[i].look != Some(id) {
                i += 1;
                continue;
            }
            let q = self.questions.swap_remove(i);
            let named = said.iter().find(|s| {
                s.aggregate_id == q.query.aggregate_id && s.request_id == q.query.request_id
            });
            let answer = match named {
                Some(s) => s.answer.clone(),
                None if complete => ConfirmAnswer::NotAppended,
                None => {
                    ConfirmAnswer::Unavailable("history's answer did not name this intent".into())
                }
            };
            if !matches!(answer, ConfirmAnswer::Unavailable(_)) {
                self.fresh.push(Fresh {
                    aggregate_id: q.query.aggregate_id,
                    request_id: q.query.request_id,
                    answer: answer.clone(),
                    at: now,
                });
            }
            self.answers.push((q.ticket, answer));
        }
    }

    /// Whether another tab's word could be a probe's, by this gate's own
    /// caps: history down since no later than now, its next look after
    /// that and no later than a pause and a look's own time from now, a
    /// count of failures a probe could make. Anything else is forged or
    /// broken, and dropped: a far `nextLookAt` would silence this gate's
    /// looks while it does not lead.
    pub(crate) fn plausible(&self, now: i64, availability: Availability) -> bool {
        match availability {
            Availability::Up => true,
            Availability::Down {
                since,
                next_look_at,
                failures,
            } => {
                let latest = now
                    .saturating_add(self.config.cap_ms as i64)
                    .saturating_add(self.config.overdue_ms as i64);
                since <= now.saturating_add(self.config.cap_ms as i64)
                    && next_look_at >= since
                    && next_look_at <= latest
                    && failures <= 1_000_000
            }
        }
    }

    /// What another tab or worker's look found (its announcement).
    pub fn heard(&mut self, availability: Availability) {
        match availability {
            Availability::Up => {
                self.availability = Availability::Up;
                self.heard_next = i64::MIN;
            }
            Availability::Down {
                since,
                next_look_at,
                failures,
            } => {
                self.heard_next = self.heard_next.max(next_look_at);
                // A gate's own schedule is never put off by another's: where
                // each process leads its own probe (no Web Locks), the
                // sooner look stands.
                self.availability = match self.availability {
                    Availability::Down {
                        since: ours,
                        next_look_at: our_next,
                        failures: f,
                    } => Availability::Down {
                        since: since.min(ours),
                        next_look_at: next_look_at.min(our_next),
                        failures: failures.max(f),
                    },
                    Availability::Up => availability,
                };
                self.last_why = "history did not answer another tab's look".into();
                self.fail(None, "history did not answer another tab's look");
            }
        }
    }

    /// Looks at once (the runtime came back online, the page became
    /// visible, `resume()` or `confirm()` was called).
    pub fn wake(&mut self, now: i64) {
        if let Availability::Down { next_look_at, .. } = &mut self.availability {
            *next_look_at = (*next_look_at).min(now);
        }
    }

    /// Whether this gate leads the probe across tabs (holds its lock).
    pub(crate) fn lead(&mut self, leads: bool) {
        self.leads = leads;
    }

    fn failed(&mut self, now: i64) {
        let (since, failures) = match self.availability {
            Availability::Up => (now, 1),
            Availability::Down {
                since, failures, ..
            } => (since, failures.saturating_add(1)),
        };
        let pause = backoff_ms(
            failures,
            self.config.base_ms,
            self.config.cap_ms,
            self.jitter.sample(),
        );
        self.availability = Availability::Down {
            since,
            next_look_at: now.saturating_add(pause as i64),
            failures,
        };
    }

    /// Every question waiting, or in look `look`, is told history is down;
    /// those in another running look wait for its answer.
    fn fail(&mut self, look: Option<u64>, why: &str) {
        let answers = &mut self.answers;
        self.questions.retain(|q| {
            let failed = q.look.is_none() || q.look == look;
            if failed {
                answers.push((q.ticket, ConfirmAnswer::Unavailable(why.to_owned())));
            }
            !failed
        });
    }
}

/// Whether an answer carries what a question that needs facts wants.
fn has_facts(answer: &ConfirmAnswer) -> bool {
    match answer {
        ConfirmAnswer::Appended { version, .. } => version.is_some(),
        _ => true,
    }
}
