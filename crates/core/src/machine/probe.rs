//! The history probe of one client: its `HistoryGate`, whether this tab
//! or worker leads the probe across the namespace (it holds the probe's
//! lock), when the gate looks next, and what waits on it at rest (an
//! intent escalated here). Every rule of it is here, none in the executor:
//! who looks while history is down, when the lock is taken and let go,
//! when the journal's escalated intents are asked about, and when they are
//! driven once history answers again (at once by the tab whose look found
//! it back, `HEARD_BACK_MS` later by one that heard it).
//!
//! Sans-IO like the gate. What happened comes in through `ask`, `note`,
//! `park`, `wake` and `handle_*`; what to do goes out through
//! [`Probe::poll_action`]; [`Probe::poll_timeout`] says when to call
//! [`Probe::handle_timeout`].
//!
//! ```text
//! let mut probe = Probe::new(GateConfig::default(), seed, iso8601);
//! let ticket = probe.ask(now, query, need_facts, not_before, false);
//! loop {
//!     while let Some(action) = probe.poll_action() { /* perform it */ }
//!     //   Look(look)        → handle_look(now, look.id, answer)
//!     //   TakeLock          → handle_lock(now, granted)
//!     //   LookForEscalated  → note(now, the journal's escalated intents)
//!     //   another tab's word → handle_heard(now, availability)
//!     //   poll_timeout() reached → handle_timeout(now)
//! }
//! ```

use std::collections::VecDeque;

use super::history::{Availability, GateConfig, HistoryGate, Look, LookAnswer, Ticket};
use super::intent_machine::ConfirmAnswer;
use crate::protocol::ConfirmQuery;
use crate::text::text;

/// How long a tab that heard history is back waits before driving what
/// waited on it here: the tab whose look found it back drives its own
/// first, from its look's answers, and this one then finds those settled
/// and asks history only about what is left.
pub(crate) const HEARD_BACK_MS: i64 = 2_000;

/// What the probe's lock request came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Granted {
    /// Held until [`ProbeAction::ReleaseLock`].
    Held,
    /// Not granted (a wait that ended without it): asked again at the next change.
    Busy,
    /// No locks across tabs here: this process leads its own probe.
    Unsupported,
}

/// What the probe asks its executor to do.
#[derive(Clone, Debug, PartialEq)]
pub enum ProbeAction {
    /// Ask history; answer with `Probe::handle_look`.
    Look(Look),
    /// Ask for the probe's lock across tabs, waiting as long as it takes;
    /// answer with `Probe::handle_lock`.
    TakeLock,
    /// Let the probe's lock go.
    ReleaseLock,
    /// Tell the namespace's other tabs and workers what this gate's look found.
    Post(Availability),
    /// Tell `onHistory`: `historyDown` after each failed look, `historyBack`
    /// once history answers again (here or heard).
    Changed {
        /// What it was.
        was: Availability,
        /// What it is.
        is: Availability,
        /// Questions waiting then.
        waiting: u32,
    },
    /// A question's answer, for its asker.
    Answer(Ticket, ConfirmAnswer),
    /// A look is due and no drive asks: ask about the journal's escalated
    /// intents (`Probe::note` them, and `Probe::park` while any is left).
    LookForEscalated,
    /// History answers again: drive what waited on it at rest, confirm first.
    DriveEscalated,
}

/// The probe of one client (one namespace and confirm source).
#[derive(Debug)]
pub struct Probe {
    gate: HistoryGate,
    /// Whether this gate leads: it holds the lock, or there are no locks.
    leading: bool,
    /// A lock request is out.
    asking: bool,
    /// The lock is held.
    holding: bool,
    /// An intent escalated here waits on the probe.
    parked: bool,
    /// When the gate's next look is due, as armed.
    look_due: Option<i64>,
    /// When to drive what waited, after hearing history is back.
    drive_at: Option<i64>,
    actions: VecDeque<ProbeAction>,
    /// Writes the times a message names.
    time_text: TimeText,
}

/// Writes an epoch time in milliseconds for a message: [`iso8601`], or
/// the engine's `toISOString` in a module that carries no date writing.
pub(crate) type TimeText = fn(i64) -> String;

impl Probe {
    /// A probe whose gate believes history is up; `seed` seeds its jitter,
    /// `time_text` writes the times its messages name.
    pub fn new(config: GateConfig, seed: u64, time_text: TimeText) -> Probe {
        Probe {
            gate: HistoryGate::new(config, seed),
            leading: false,
            asking: false,
            holding: false,
            parked: false,
            look_due: None,
            drive_at: None,
            actions: VecDeque::new(),
            time_text,
        }
    }

    /// The gate (its availability and questions waiting, for `client.history`).
    pub(crate) fn gate(&self) -> &HistoryGate {
        &self.gate
    }

    /// A drive asks about its intent (`person`: `confirm()`, looked at now).
    pub fn ask(
        &mut self,
        now: i64,
        query: ConfirmQuery,
        need_facts: bool,
        not_before: i64,
        person: bool,
    ) -> Ticket {
        let ticket = if person {
            self.gate.ask_now(now, query, need_facts, not_before)
        } else {
            self.gate.ask(now, query, need_facts, not_before)
        };
        self.pump(now);
        ticket
    }

    /// Asks about intents waiting at rest, without an asker: a look's
    /// answers serve their drives after it.
    pub(crate) fn note(&mut self, now: i64, queries: Vec<ConfirmQuery>) {
        for query in queries {
            self.gate.note(now, query, true);
        }
        self.pump(now);
    }

    /// An intent escalated: the probe looks for it until history answers.
    pub(crate) fn park(&mut self, now: i64) {
        self.parked = true;
        self.pump(now);
    }

    /// Looks at once if history is down (online again, visible, `resume()`,
    /// `confirm()`).
    pub fn wake(&mut self, now: i64) {
        self.gate.wake(now);
        self.pump(now);
    }

    /// The next thing to do.
    pub fn poll_action(&mut self) -> Option<ProbeAction> {
        self.actions.pop_front()
    }

    /// When [`Probe::handle_timeout`] is due.
    pub fn poll_timeout(&self) -> Option<i64> {
        match (self.look_due, self.drive_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Look `id` answered.
    pub(crate) fn handle_look(&mut self, now: i64, id: u64, answer: LookAnswer) {
        let was = self.gate.availability();
        self.gate.handle_look(now, id, answer);
        let is = self.gate.availability();
        if is != Availability::Up || was != Availability::Up {
            self.actions.push_back(ProbeAction::Post(is));
            self.changed(now, was, is, false);
        }
        self.pump(now);
    }

    /// Another tab's or worker's word on its look.
    pub fn handle_heard(&mut self, now: i64, heard: Availability) {
        let was = self.gate.availability();
        self.gate.heard(heard);
        if was != Availability::Up && heard == Availability::Up {
            self.changed(now, was, heard, true);
        }
        self.pump(now);
    }

    /// The probe's lock request came to `granted`.
    pub(crate) fn handle_lock(&mut self, now: i64, granted: Granted) {
        self.asking = false;
        match granted {
            Granted::Held => self.holding = true,
            // Asked again at the next change.
            Granted::Busy => return self.pump(now),
            Granted::Unsupported => {}
        }
        self.leading = true;
        self.gate.lead(true);
        self.pump(now);
    }

    /// A time [`Probe::poll_timeout`] gave has come.
    pub fn handle_timeout(&mut self, now: i64) {
        if self.drive_at.is_some_and(|at| at <= now) {
            self.drive_at = None;
            self.actions.push_back(ProbeAction::DriveEscalated);
        }
        if self.look_due.is_some_and(|at| at <= now) {
            self.look_due = None;
            // Due, and no drive is asking: look for what waits at rest.
            if self.gate.waiting() == 0 && self.parked {
                self.parked = false;
                self.actions.push_back(ProbeAction::LookForEscalated);
                return;
            }
        }
        self.pump(now);
    }

    /// `onHistory`, and what waited here at rest is driven once history
    /// answers again.
    fn changed(&mut self, now: i64, was: Availability, is: Availability, heard: bool) {
        self.actions.push_back(ProbeAction::Changed {
            was,
            is,
            waiting: self.gate.waiting() as u32,
        });
        if is == Availability::Up && self.parked {
            self.parked = false;
            if heard {
                self.drive_at = Some(now.saturating_add(HEARD_BACK_MS));
            } else {
                self.actions.push_back(ProbeAction::DriveEscalated);
            }
        }
    }

    /// Starts what is due, hands each answer to its asker, and keeps the
    /// lock and the timer in step with the gate.
    fn pump(&mut self, now: i64) {
        while let Some(look) = self.gate.poll_look(now) {
            self.actions.push_back(ProbeAction::Look(look));
        }
        let suffix = match self.gate.availability() {
            Availability::Down {
                since,
                next_look_at,
                ..
            } => text!(
                "; history unavailable since ",
                (self.time_text)(since),
                ", next look at ",
                (self.time_text)(next_look_at)
            ),
            Availability::Up => String::new(),
        };
        while let Some((ticket, answer)) = self.gate.poll_answer() {
            let answer = match answer {
                ConfirmAnswer::Unavailable(why) => ConfirmAnswer::Unavailable(why + &suffix),
                answer => answer,
            };
            self.actions.push_back(ProbeAction::Answer(ticket, answer));
        }
        let down = self.gate.availability() != Availability::Up;
        let work = self.gate.waiting() > 0 || self.parked;
        if !(down && work) {
            // Nothing to look for, or history answers: the probe is free.
            if self.holding {
                self.holding = false;
                self.actions.push_back(ProbeAction::ReleaseLock);
            }
            self.leading = false;
            self.gate.lead(!down);
        } else if !self.leading && !self.asking {
            self.gate.lead(false);
            self.asking = true;
            self.actions.push_back(ProbeAction::TakeLock);
        }
        // What waits here at rest, while another tab leads: looked for
        // once that tab's look is overdue.
        let parked_here = (self.parked && !self.leading && self.gate.waiting() == 0)
            .then(|| self.gate.overdue_at())
            .flatten();
        // An earlier due look re-arms the timer; a later one waits for it.
        if let Some(at) = self.gate.poll_timeout().or(parked_here) {
            if self.look_due.is_none_or(|due| at < due) {
                self.look_due = Some(at);
            }
        }
    }
}

/// An epoch time in milliseconds as ISO 8601 UTC text
/// (`2026-12-04T23:11:17.000Z`, what `Date.prototype.toISOString` writes).
pub fn iso8601(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let two = |n: i64| {
        let n = n as u8;
        [b'0' + n / 10, b'0' + n % 10]
    };
    let mut out = String::with_capacity(24);
    out.push_str(&text!(year));
    for (sep, part) in [
        ('-', two(month)),
        ('-', two(day)),
        ('T', two(in_day / 3_600_000)),
        (':', two(in_day / 60_000 % 60)),
        (':', two(in_day / 1_000 % 60)),
    ] {
        out.push(sep);
        out.push(part[0] as char);
        out.push(part[1] as char);
    }
    let milli = in_day % 1_000;
    out.push('.');
    out.push_str(&text!(milli / 100, milli / 10 % 10, milli % 10));
    out.push('Z');
    out
}
