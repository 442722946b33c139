//! The sans-IO state machine that drives one intent: send, read the answer
//! (every stream element checked), and when the outcome is unknown, confirm
//! against the authoritative history before deciding — never a blind resend.
//!
//! # Call order
//!
//! ```text
//! let mut m = IntentMachine::new(record, config, seed);
//! m.start(now);
//! loop {
//!     while let Some(action) = m.poll_action() { /* execute it */ }
//!     // then feed exactly one completion, or the timer:
//!     //   Persist      → handle_persisted(now, result)
//!     //   Send         → handle_response | handle_transport_error
//!     //   OpenStream   → handle_stream_element* then handle_stream_end
//!     //                  (or handle_transport_error)
//!     //   Confirm      → handle_confirm(now, answer)
//!     //   poll_timeout() reached → handle_timeout(now)
//!     // until an Action::Done has been returned.
//! }
//! ```
//!
//! The machine never reads a clock and never does I/O; `now` is always a
//! parameter and every effect is an [`Action`]. Inputs for an attempt that
//! is no longer current (a late answer after a timeout) are ignored.
//!
//! An answer that is not about this intent (another request's CommandResult
//! handed back by a proxy, a cache or a confused gateway: its requestId, or
//! the main command's aggregateId, differs) is no evidence either way: the
//! attempt's outcome is unknown and goes to confirmation, and the final
//! outcome's reason says what did not match.

use crate::text::text;
use std::collections::VecDeque;

use super::backoff::{backoff_ms, Jitter};
use super::outcome::{error_info, Outcome, Status};
use crate::journal::{Attempt, AttemptOutcome, IntentRecord, IntentState, StoreError, WaitEnd};
use crate::protocol::{
    CommandResult, CommandStage, ConfirmQuery, ErrorClass, ErrorCode, ErrorInfo, JsonResponse,
    ResponseBody, StreamElement,
};

/// Retry and timing settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineConfig {
    /// How long the caller waits for one attempt before the outcome is unknown.
    pub caller_timeout_ms: u64,
    /// Attempts per drive (the first send included).
    pub max_attempts: u32,
    /// Backoff base between attempts.
    pub retry_base_ms: u64,
    /// Backoff cap.
    pub retry_max_ms: u64,
    /// Confirmation queries before escalating.
    pub max_confirms: u32,
    /// Backoff base between confirmation queries.
    pub confirm_base_ms: u64,
    /// Use the SSE stage stream.
    pub stream: bool,
    /// The drive was asked for by the caller (`confirm()`): each question
    /// looks at history now, not at the probe's next look.
    pub confirm_now: bool,
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            caller_timeout_ms: 30_000,
            max_attempts: 3,
            retry_base_ms: 200,
            retry_max_ms: 10_000,
            max_confirms: 3,
            confirm_base_ms: 300,
            stream: false,
            confirm_now: false,
        }
    }
}

/// A transport failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportError {
    /// Proven not to have left (the request could not even be built).
    NeverSent(String),
    /// Anything else: the request may have arrived.
    Lost(String),
    /// As `Lost`, while the runtime reported being offline.
    Offline(String),
}

/// What the history said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfirmAnswer {
    /// A stream with the requestId exists on the aggregate.
    Appended {
        /// Its version, when the confirmer returned the stream.
        version: Option<i64>,
        /// Its commandId, when known.
        command_id: Option<String>,
    },
    /// No such stream: the intent did not commit.
    NotAppended,
    /// The history could not be asked.
    Unavailable(String),
}

/// An effect for the driver to carry out.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Write the record (compare-and-swap); answer with `handle_persisted`.
    Persist(Box<IntentRecord>),
    /// Send attempt `attempt` and wait for one JSON answer.
    Send {
        /// The attempt number.
        attempt: u32,
    },
    /// Send attempt `attempt` with `Accept: text/event-stream` and feed each element.
    OpenStream {
        /// The attempt number.
        attempt: u32,
    },
    /// Ask the history; answer with `handle_confirm`. `need_facts`: the
    /// appended stream's version and commandId are wanted (a list query
    /// rather than a count).
    Confirm {
        /// The question.
        query: ConfirmQuery,
        /// Whether the stream itself is wanted.
        need_facts: bool,
    },
    /// A stream element, as soon as it arrived, for the caller (error
    /// events included, as failed elements).
    Emit(Box<StreamElement>),
    /// The drive is over.
    Done(Box<Outcome>),
}

/// A caller's deadline, kept apart from the server's: the gateway's wait
/// deadline answers `RequestTimeout` with its own message.
const CALLER_TIMEOUT: &str =
    "caller timeout (timeoutMs), not the server's wait deadline: the outcome is unknown";

/// Why history is being asked, and what to conclude from each answer.
#[derive(Clone, Debug, PartialEq)]
enum Why {
    /// Nothing is known.
    Unknown,
    /// The server said DuplicateRequestId.
    Duplicate,
    /// A failure that may or may not have stored events.
    Business,
    /// A create whose id was taken: ours, or someone else's?
    CreateConflict,
    /// A resend the gateway accepted at SENT: since Wow 9.3 a gateway-only
    /// service lets a duplicate through and the processing node refuses it
    /// later, so only history says the intent is appended.
    Resent,
}

/// What the server last said about a failure.
#[derive(Clone, Debug, PartialEq, Default)]
struct Failed {
    result: Option<CommandResult>,
    info: Option<ErrorInfo>,
}

impl Failed {
    fn from_result(r: &CommandResult) -> Failed {
        Failed {
            info: Some(ErrorInfo::from(r)),
            result: Some(r.clone()),
        }
    }

    fn from_info(info: ErrorInfo) -> Failed {
        Failed {
            result: None,
            info: Some(info),
        }
    }

    fn message(code: ErrorCode, msg: &str) -> Failed {
        Failed::from_info(error_info(code, msg))
    }
}

/// The machine's verdict on one answer.
enum Verdict {
    Success(CommandResult),
    /// Refused before anything could be stored.
    Reject(Failed),
    /// A version conflict on an existing aggregate: nothing of this attempt stored.
    Conflict(Failed),
    Confirm(Why, Failed),
    /// Load shedding before the bus: try again later.
    RetryLater(Option<u64>, Failed),
    /// The append is proven by a successful PROCESSED; the wait stage was not seen.
    AppendedPending(Failed),
}

/// What the drive is doing.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    Idle,
    /// Waiting for the storage write; then `Then`.
    Persisting(Then),
    InFlight(Box<Flight>),
    Confirming {
        why: Why,
        tries: u32,
    },
    ConfirmBackoff {
        why: Why,
        tries: u32,
        at: i64,
    },
    RetryBackoff {
        at: i64,
    },
    Finished,
}

#[derive(Clone, Debug, PartialEq)]
enum Then {
    Send,
    Confirm(Why),
    Finish(Box<Outcome>),
}

/// One attempt on the wire.
#[derive(Clone, Debug, PartialEq)]
struct Flight {
    attempt: u32,
    deadline: i64,
    /// The HTTP command's id (from the first element).
    main_command_id: Option<String>,
    processed: bool,
    target_reached: Option<CommandResult>,
    tail_reached: bool,
    failed: Option<StreamElement>,
    /// An element that was not about this intent, and why.
    misrouted: Option<String>,
}

/// The state machine of one intent.
#[derive(Debug)]
pub struct IntentMachine {
    record: IntentRecord,
    config: MachineConfig,
    jitter: Jitter,
    phase: Phase,
    actions: VecDeque<Action>,
    /// The failure the current confirmation is about.
    failed: Failed,
    /// Attempts sent in this drive (the budget is per drive).
    sent_this_drive: u32,
    outcome: Option<Outcome>,
    /// The last answer that was not about this intent, and why: said in the
    /// final outcome's reason.
    misrouted: Option<String>,
    /// What ended the caller's wait for the current attempt, recorded on it.
    wait_end: Option<WaitEnd>,
    /// The caller stopped waiting (an abort) while the drive goes on.
    caller_left: bool,
}

impl IntentMachine {
    /// A machine for `record`; `seed` seeds the retry jitter.
    pub fn new(record: IntentRecord, config: MachineConfig, seed: u64) -> IntentMachine {
        IntentMachine {
            record,
            config,
            jitter: Jitter::new(seed),
            phase: Phase::Idle,
            actions: VecDeque::new(),
            failed: Failed::default(),
            sent_this_drive: 0,
            outcome: None,
            misrouted: None,
            wait_end: None,
            caller_left: false,
        }
    }

    /// The record as the machine last changed it.
    pub fn record(&self) -> &IntentRecord {
        &self.record
    }

    /// The outcome, once done.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// When the next attempt is due, while the machine waits to send again.
    pub(crate) fn retrying_at(&self) -> Option<i64> {
        match self.phase {
            Phase::RetryBackoff { at } => Some(at),
            _ => None,
        }
    }

    /// The next effect to carry out.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When `handle_timeout` is due next.
    pub fn poll_timeout(&self) -> Option<i64> {
        match &self.phase {
            Phase::InFlight(f) => Some(f.deadline),
            Phase::ConfirmBackoff { at, .. } | Phase::RetryBackoff { at } => Some(*at),
            _ => None,
        }
    }

    /// Starts (or resumes) the drive from the record's state.
    pub fn start(&mut self, now: i64) {
        if !matches!(self.phase, Phase::Idle) {
            return;
        }
        match self.record.state {
            // A queued intent is driven once its turn has come (the driver
            // asks the journal's scope first).
            IntentState::Pending | IntentState::Queued => self.begin_attempt(now),
            // A crash or reload mid-flight, or an earlier unknown: ask first.
            IntentState::Sending | IntentState::Unknown | IntentState::Escalated => {
                self.failed = Failed::default();
                self.persist_then(
                    now,
                    IntentState::Unknown,
                    Some("resumed: outcome not known".into()),
                    Then::Confirm(Why::Unknown),
                );
            }
            IntentState::Succeeded
            | IntentState::Rejected
            | IntentState::Conflict
            | IntentState::Withdrawn => {
                self.finish_now(Outcome::from_record(&self.record));
            }
        }
    }

    /// The caller stopped waiting (its signal aborted) and the drive goes on
    /// without it: the current attempt, and any after it in this drive,
    /// record `cancelled` as what ended the caller's wait. Nothing else changes.
    pub fn caller_left(&mut self) {
        self.caller_left = true;
    }

    /// The runtime is offline: the send or the history query the machine
    /// just asked for (its `Send`, `OpenStream` or `Confirm`) was not made.
    /// No budget is spent: an attempt that never left is taken back, a query
    /// not asked is not counted. The intent waits in the journal, `pending`
    /// when nothing was ever sent and `unknown` otherwise (confirmed first
    /// when it is driven again), with reason `offline`; the drive ends with
    /// status unknown and error code `Offline`.
    pub(crate) fn handle_offline(&mut self, now: i64) {
        match &self.phase {
            Phase::InFlight(_) => {
                self.record.attempts.pop();
                self.sent_this_drive = self.sent_this_drive.saturating_sub(1);
            }
            Phase::Confirming { .. } => {}
            _ => return,
        }
        let never_sent = self.record.attempts.is_empty();
        let state = if never_sent {
            IntentState::Pending
        } else {
            IntentState::Unknown
        };
        let mut outcome = self.outcome_with(Status::Unknown, None);
        if never_sent {
            outcome.appended = Some(false);
        }
        outcome.error = Some(error_info(
            ErrorCode::Other("Offline".into()),
            "the runtime is offline; the intent waits in the journal",
        ));
        outcome.reason = Some("offline".into());
        self.persist_then(
            now,
            state,
            Some("offline".into()),
            Then::Finish(Box::new(outcome)),
        );
    }

    /// The storage write finished.
    pub fn handle_persisted(&mut self, now: i64, result: Result<u64, StoreError>) {
        let Phase::Persisting(then) = std::mem::replace(&mut self.phase, Phase::Idle) else {
            return;
        };
        match result {
            Ok(revision) => {
                self.record.set_revision(revision);
                match then {
                    Then::Send => self.send(now),
                    Then::Confirm(why) => self.confirm(why, 0),
                    Then::Finish(outcome) => self.finish_now(*outcome),
                }
            }
            Err(e) => match then {
                // No durable record of the attempt: nothing may be sent.
                Then::Send => {
                    self.record.attempts.pop();
                    let mut outcome = self.outcome_with(Status::Unknown, None);
                    outcome.appended = if self.record.attempts.is_empty() {
                        Some(false)
                    } else {
                        None
                    };
                    outcome.error = Some(error_info(
                        ErrorCode::Other("StorageUnavailable".into()),
                        &e.message(),
                    ));
                    outcome.reason = Some(text!("not sent: ", e.message()));
                    self.finish_now(outcome);
                }
                // The outcome stands even if it could not be recorded: the
                // stored state is an earlier one, which a resume confirms.
                Then::Finish(outcome) => self.finish_now(*outcome),
                Then::Confirm(why) => self.confirm(why, 0),
            },
        }
    }

    /// A JSON answer to attempt `attempt`.
    pub fn handle_response(
        &mut self,
        now: i64,
        attempt: u32,
        response: JsonResponse,
        retry_after_ms: Option<u64>,
    ) {
        if !self.is_current(attempt) {
            return;
        }
        self.wait_end = Some(WaitEnd::Answer);
        if let ResponseBody::CommandResult(r) = &response.body {
            if let Some(why) = self.misrouted(r, true) {
                self.misrouted = Some(why.clone());
                let failed = Failed::message(ErrorCode::Other("MisroutedAnswer".into()), &why);
                return self.apply(now, Verdict::Confirm(Why::Unknown, failed));
            }
            self.note_command_id(r);
            self.record.last_result = Some(r.clone());
        }
        let verdict = self.judge_json(response, retry_after_ms);
        self.apply(now, verdict);
    }

    /// One element of attempt `attempt`'s stage stream.
    pub(crate) fn handle_stream_element(&mut self, attempt: u32, element: StreamElement) {
        if !self.is_current(attempt) {
            return;
        }
        let target = self.record.command.wait.stage;
        let tail = self.record.command.wait.tail_stage;
        let Phase::InFlight(flight) = &self.phase else {
            return;
        };
        if let Some(r) = element.command_result() {
            let main = flight
                .main_command_id
                .as_deref()
                .is_none_or(|id| id == r.command_id);
            if let Some(why) = self.misrouted(r, main) {
                // Neither shown to the caller nor counted: it is someone else's.
                self.misrouted = Some(why.clone());
                if let Phase::InFlight(flight) = &mut self.phase {
                    flight.misrouted = Some(why);
                }
                return;
            }
        }
        let Phase::InFlight(flight) = &mut self.phase else {
            return;
        };
        if let Some(r) = element.command_result() {
            let r = r.clone();
            if flight.main_command_id.is_none() {
                flight.main_command_id = Some(r.command_id.clone());
            }
            let main = flight.main_command_id.as_deref() == Some(r.command_id.as_str());
            if element.is_succeeded() {
                if main && r.stage == CommandStage::Processed {
                    flight.processed = true;
                }
                if main && r.stage == target {
                    flight.target_reached = Some(r.clone());
                }
                if !main && tail == Some(r.stage) {
                    flight.tail_reached = true;
                }
            }
            self.note_command_id(&r);
            self.record.last_result = Some(r);
        }
        self.actions
            .push_back(Action::Emit(Box::new(element.clone())));
        if let Phase::InFlight(flight) = &mut self.phase {
            if !element.is_succeeded() && flight.failed.is_none() {
                flight.failed = Some(element);
            }
        }
    }

    /// Attempt `attempt`'s stream ended (`cut`: with a transport error).
    pub(crate) fn handle_stream_end(&mut self, now: i64, attempt: u32, cut: bool) {
        if !self.is_current(attempt) {
            return;
        }
        let Phase::InFlight(flight) = self.phase.clone() else {
            return;
        };
        let why = if cut {
            "the stream was cut"
        } else {
            "the stream ended before the wait stage"
        };
        self.wait_end = Some(if cut {
            WaitEnd::StreamCut
        } else {
            WaitEnd::Answer
        });
        let verdict = self.judge_stream(&flight, !cut, why);
        self.apply(now, verdict);
    }

    /// Attempt `attempt` failed in transport.
    pub(crate) fn handle_transport_error(&mut self, now: i64, attempt: u32, error: TransportError) {
        if !self.is_current(attempt) {
            return;
        }
        let Phase::InFlight(flight) = self.phase.clone() else {
            return;
        };
        self.wait_end = Some(match error {
            TransportError::NeverSent(_) => WaitEnd::NotSent,
            TransportError::Lost(_) => WaitEnd::Lost,
            TransportError::Offline(_) => WaitEnd::Offline,
        });
        let error = match error {
            TransportError::Offline(why) => TransportError::Lost(why),
            other => other,
        };
        let verdict = match error {
            TransportError::NeverSent(why) => {
                Verdict::Reject(Failed::message(ErrorCode::Other("NotSent".into()), &why))
            }
            TransportError::Lost(why) if self.config.stream => {
                let mut verdict = self.judge_stream(&flight, false, &why);
                if let Verdict::Confirm(_, failed) = &mut verdict {
                    failed.info.get_or_insert_with(|| {
                        error_info(ErrorCode::Other("TransportError".into()), &why)
                    });
                }
                verdict
            }
            TransportError::Lost(why) | TransportError::Offline(why) => Verdict::Confirm(
                Why::Unknown,
                Failed::message(ErrorCode::Other("TransportError".into()), &why),
            ),
        };
        self.apply(now, verdict);
    }

    /// The history's answer.
    pub fn handle_confirm(&mut self, now: i64, answer: ConfirmAnswer) {
        let Phase::Confirming { why, tries } = self.phase.clone() else {
            return;
        };
        match answer {
            ConfirmAnswer::Appended {
                version,
                command_id,
            } => {
                self.record.appended = Some(true);
                self.record.appended_version = version.or(self.record.appended_version);
                let status = match why {
                    Why::Business => Status::Rejected,
                    Why::Unknown | Why::Duplicate | Why::CreateConflict | Why::Resent => {
                        Status::Succeeded
                    }
                };
                let mut outcome = self.outcome_with(status, Some(true));
                outcome.appended_version = version;
                outcome.appended_command_id = command_id;
                if why == Why::Resent {
                    outcome.result = self.record.last_result.clone();
                }
                if status == Status::Succeeded {
                    outcome.error = None;
                    let target = self.record.command.wait.stage;
                    let seen = self
                        .record
                        .last_result
                        .as_ref()
                        .is_some_and(|r| r.stage == target && r.is_succeeded());
                    if target > CommandStage::Processed && !seen {
                        outcome.downstream_pending = Some(target);
                    }
                }
                self.settle(now, outcome);
            }
            // Accepted by the bus, not in history yet: processing may lag,
            // or a processing node refused it as a duplicate. Asked again,
            // then escalated; never sent again from here.
            ConfirmAnswer::NotAppended if why == Why::Resent => self.confirm_again_or_escalate(
                now,
                why,
                tries,
                "a resend was accepted at SENT, and history does not show it appended",
            ),
            ConfirmAnswer::NotAppended => {
                self.record.appended = Some(false);
                match why {
                    Why::Business => {
                        let outcome = self.outcome_with(Status::Rejected, Some(false));
                        self.settle(now, outcome);
                    }
                    Why::CreateConflict => {
                        self.settle(
                            now,
                            self.outcome_with(Status::Conflict, Some(false))
                                .because("the aggregate id belongs to someone else"),
                        );
                    }
                    // The server saw the requestId, history does not: a
                    // processing node's window (Wow 9.3) or a pre-check's
                    // false positive. Sent again with it, bounded, then escalated.
                    Why::Duplicate if self.sent_this_drive >= self.config.max_attempts => {
                        let reason = text!(
                            "the gateway said DuplicateRequestId ",
                            self.sent_this_drive,
                            " times, and history does not show the intent appended"
                        );
                        self.escalate(now, reason);
                    }
                    // Confirmed not committed: retrying with the same requestId is safe.
                    Why::Unknown | Why::Duplicate => self.retry_or_give_up(now, None),
                    Why::Resent => unreachable!("answered above"),
                }
            }
            ConfirmAnswer::Unavailable(why_not) => {
                self.confirm_again_or_escalate(now, why, tries, &why_not)
            }
        }
    }

    /// History did not settle it: asked again after a backoff, up to
    /// `max_confirms` questions, then escalated with `why_not`.
    fn confirm_again_or_escalate(&mut self, now: i64, why: Why, tries: u32, why_not: &str) {
        let tries = tries + 1;
        if tries < self.config.max_confirms {
            let delay = backoff_ms(
                tries,
                self.config.confirm_base_ms,
                self.config.retry_max_ms,
                self.jitter.sample(),
            );
            self.phase = Phase::ConfirmBackoff {
                why,
                tries,
                at: now.saturating_add(delay as i64),
            };
        } else {
            let reason = text!("could not confirm after ", tries, " queries: ", why_not);
            self.escalate(now, reason);
        }
    }

    /// Ends the drive escalated: the intent waits on history (the probe).
    fn escalate(&mut self, now: i64, reason: String) {
        self.settle(
            now,
            self.outcome_with(Status::Escalated, None).because(&reason),
        );
    }

    /// A timer is due.
    pub fn handle_timeout(&mut self, now: i64) {
        match self.phase.clone() {
            Phase::InFlight(flight) if now >= flight.deadline => {
                self.wait_end = Some(WaitEnd::Timeout);
                let verdict = if self.config.stream {
                    self.judge_stream(&flight, false, CALLER_TIMEOUT)
                } else {
                    Verdict::Confirm(
                        Why::Unknown,
                        Failed::message(ErrorCode::RequestTimeout, CALLER_TIMEOUT),
                    )
                };
                self.apply(now, verdict);
            }
            Phase::ConfirmBackoff { why, tries, at } if now >= at => self.confirm(why, tries),
            Phase::RetryBackoff { at } if now >= at => self.begin_attempt(now),
            _ => {}
        }
    }

    // ------------------------------------------------------------ internals

    fn is_current(&self, attempt: u32) -> bool {
        matches!(&self.phase, Phase::InFlight(f) if f.attempt == attempt)
    }

    /// Why `r` is not about this intent, if it is not. Every element of the
    /// intent's stream carries its requestId, saga-chain signals included
    /// (PROTOCOL §2.1); the main command's elements also its aggregateId.
    fn misrouted(&self, r: &CommandResult, main: bool) -> Option<String> {
        if r.request_id != self.record.request_id {
            return Some(text!(
                "an answer was not for this intent: requestId `",
                r.request_id,
                "` instead of `",
                self.record.request_id,
                "`"
            ));
        }
        let ours = &self.record.aggregate.aggregate_id;
        if main && !ours.is_empty() && !r.aggregate_id.is_empty() && r.aggregate_id != *ours {
            return Some(text!(
                "an answer was not for this intent: aggregateId `",
                r.aggregate_id,
                "` instead of `",
                ours,
                "`"
            ));
        }
        None
    }

    fn note_command_id(&mut self, r: &CommandResult) {
        if let Some(a) = self.record.attempts.last_mut() {
            if a.command_id.is_none() {
                a.command_id = Some(r.wait_command_id.clone());
            }
        }
    }

    fn begin_attempt(&mut self, now: i64) {
        let number = self.record.attempts.len() as u32 + 1;
        self.record.attempts.push(Attempt {
            number,
            sent_at: now,
            command_id: None,
            ended_at: None,
            outcome: None,
            caller_deadline: None,
            wait_ended_by: None,
        });
        self.record.appended = None;
        // Durable before the first byte: the requestId and this attempt.
        self.persist_then(now, IntentState::Sending, None, Then::Send);
    }

    fn send(&mut self, now: i64) {
        let attempt = self.record.attempts.len() as u32;
        self.sent_this_drive += 1;
        let deadline = now.saturating_add(self.config.caller_timeout_ms as i64);
        if let Some(a) = self.record.attempts.last_mut() {
            a.caller_deadline = Some(deadline);
        }
        self.phase = Phase::InFlight(Box::new(Flight {
            attempt,
            deadline,
            main_command_id: None,
            processed: false,
            target_reached: None,
            tail_reached: false,
            failed: None,
            misrouted: None,
        }));
        self.actions.push_back(if self.config.stream {
            Action::OpenStream { attempt }
        } else {
            Action::Send { attempt }
        });
    }

    fn confirm(&mut self, why: Why, tries: u32) {
        // A wait past PROCESSED also wants the appended version: it is what a
        // later `awaitDownstream` compares the snapshot's with.
        let need_facts = matches!(why, Why::Duplicate | Why::CreateConflict)
            || self.record.command.wait.stage > CommandStage::Processed;
        self.phase = Phase::Confirming { why, tries };
        self.actions.push_back(Action::Confirm {
            query: self.record.confirm_query(),
            need_facts,
        });
    }

    fn persist_then(&mut self, now: i64, state: IntentState, reason: Option<String>, then: Then) {
        self.record.state = state;
        self.record.waits_for = None;
        self.record.reason = reason;
        self.record.updated_at = now;
        self.phase = Phase::Persisting(then);
        self.actions
            .push_back(Action::Persist(Box::new(self.record.clone())));
    }

    /// Records the outcome's state and ends the drive once it is written.
    fn settle(&mut self, now: i64, outcome: Outcome) {
        let state = match outcome.status {
            Status::Succeeded => IntentState::Succeeded,
            Status::Rejected => IntentState::Rejected,
            Status::Conflict => IntentState::Conflict,
            Status::Escalated => IntentState::Escalated,
            Status::Unknown => IntentState::Unknown,
        };
        let mut outcome = outcome;
        if let Some(why) = &self.misrouted {
            outcome.reason = Some(match outcome.reason.take() {
                Some(reason) => text!(reason, "; ", why),
                None => why.clone(),
            });
        }
        let reason = outcome.reason.clone();
        self.persist_then(now, state, reason, Then::Finish(Box::new(outcome)));
    }

    fn finish_now(&mut self, outcome: Outcome) {
        self.phase = Phase::Finished;
        self.outcome = Some(outcome.clone());
        self.actions.push_back(Action::Done(Box::new(outcome)));
    }

    fn end_attempt(&mut self, now: i64, outcome: AttemptOutcome) {
        let ended_by = self.wait_end.take();
        let ended_by = if self.caller_left {
            Some(WaitEnd::Cancelled)
        } else {
            ended_by
        };
        if let Some(a) = self.record.attempts.last_mut() {
            if a.outcome.is_none() {
                a.ended_at = Some(now);
                a.outcome = Some(outcome);
                a.wait_ended_by = ended_by;
            }
        }
    }

    fn outcome_with(&self, status: Status, appended: Option<bool>) -> Outcome {
        let mut outcome = Outcome::from_record(&self.record);
        outcome.status = status;
        outcome.appended = appended;
        if let Some(r) = &self.failed.result {
            outcome.result = Some(r.clone());
        }
        outcome.error = self.failed.info.clone();
        outcome.reason = None;
        outcome
    }

    /// Whether an attempt before the last one ended without a verdict.
    fn earlier_attempt_unknown(&self) -> bool {
        let attempts = &self.record.attempts;
        attempts[..attempts.len().saturating_sub(1)]
            .iter()
            .any(|a| matches!(a.outcome, Some(AttemptOutcome::Unknown(_))) || a.outcome.is_none())
    }

    fn retry_or_give_up(&mut self, now: i64, retry_after_ms: Option<u64>) {
        if self.sent_this_drive < self.config.max_attempts {
            let n = self.sent_this_drive;
            let delay = retry_after_ms.unwrap_or_else(|| {
                backoff_ms(
                    n,
                    self.config.retry_base_ms,
                    self.config.retry_max_ms,
                    self.jitter.sample(),
                )
            });
            self.record.state = IntentState::Unknown;
            self.phase = Phase::RetryBackoff {
                at: now.saturating_add(delay as i64),
            };
        } else {
            let reason = text!(
                "not appended after ",
                self.sent_this_drive,
                " attempts; resume() tries again"
            );
            let outcome = self
                .outcome_with(Status::Unknown, self.record.appended)
                .because(&reason);
            self.settle(now, outcome);
        }
    }

    fn judge_failure(&self, r: &CommandResult) -> Verdict {
        let failed = Failed::from_result(r);
        let class = r
            .error_code
            .classify(Some(r.stage))
            .unwrap_or(ErrorClass::Unknown);
        match class {
            ErrorClass::RejectedBeforeSend => Verdict::Reject(failed),
            ErrorClass::Duplicate => Verdict::Confirm(Why::Duplicate, failed),
            ErrorClass::Conflict if self.record.command.create => {
                Verdict::Confirm(Why::CreateConflict, failed)
            }
            ErrorClass::Conflict => Verdict::Conflict(failed),
            ErrorClass::BusinessRejection if r.stage == CommandStage::Sent => {
                Verdict::Reject(failed)
            }
            ErrorClass::BusinessRejection => Verdict::Confirm(Why::Business, failed),
            ErrorClass::Transient if r.stage == CommandStage::Sent => {
                Verdict::RetryLater(None, failed)
            }
            ErrorClass::Transient | ErrorClass::Unknown => Verdict::Confirm(Why::Unknown, failed),
        }
    }

    fn judge_json(&self, response: JsonResponse, retry_after_ms: Option<u64>) -> Verdict {
        if let Some(r) = response.success() {
            return Verdict::Success(r.clone());
        }
        let class = response.failure_class().unwrap_or(ErrorClass::Unknown);
        match response.body {
            ResponseBody::CommandResult(r) if !r.error_code.is_ok() => self.judge_failure(&r),
            ResponseBody::CommandResult(r) => {
                Verdict::Confirm(Why::Unknown, Failed::from_result(&r))
            }
            ResponseBody::ErrorInfo(info) => match class {
                ErrorClass::RejectedBeforeSend | ErrorClass::BusinessRejection => {
                    Verdict::Reject(Failed::from_info(info))
                }
                ErrorClass::Transient => {
                    Verdict::RetryLater(retry_after_ms, Failed::from_info(info))
                }
                ErrorClass::Duplicate => Verdict::Confirm(Why::Duplicate, Failed::from_info(info)),
                ErrorClass::Conflict | ErrorClass::Unknown => {
                    Verdict::Confirm(Why::Unknown, Failed::from_info(info))
                }
            },
            ResponseBody::Other { reason } => {
                let code = match response.status {
                    0 => ErrorCode::Other("TransportError".into()),
                    s => ErrorCode::Other(text!("HttpStatus", s)),
                };
                let failed = Failed::message(code, &reason);
                match class {
                    ErrorClass::RejectedBeforeSend => Verdict::Reject(failed),
                    ErrorClass::Transient => Verdict::RetryLater(retry_after_ms, failed),
                    _ => Verdict::Confirm(Why::Unknown, failed),
                }
            }
        }
    }

    /// The verdict on a stream so far, when it ends, is cut or times out.
    fn judge_stream(&self, flight: &Flight, clean_end: bool, why_unfinished: &str) -> Verdict {
        if let Some(element) = &flight.failed {
            return match element {
                StreamElement::Stage(r) => self.judge_failure(r),
                StreamElement::Error {
                    body: ResponseBody::CommandResult(r),
                    ..
                } => self.judge_failure(r),
                StreamElement::Error { code, body } => {
                    let info = match body {
                        ResponseBody::ErrorInfo(info) => info.clone(),
                        _ => error_info(code.clone(), "error event"),
                    };
                    let nothing_seen = flight.main_command_id.is_none();
                    match code.classify(None) {
                        // A bad request in SSE mode: one error event, nothing else.
                        Some(ErrorClass::RejectedBeforeSend) if nothing_seen => {
                            Verdict::Reject(Failed::from_info(info))
                        }
                        _ if flight.processed => Verdict::AppendedPending(Failed::from_info(info)),
                        _ => Verdict::Confirm(Why::Unknown, Failed::from_info(info)),
                    }
                }
            };
        }
        if let (None, Some(why)) = (&flight.target_reached, &flight.misrouted) {
            let failed = Failed::message(ErrorCode::Other("MisroutedAnswer".into()), why);
            return Verdict::Confirm(Why::Unknown, failed);
        }
        let tail_needed = self.record.command.wait.tail_stage.is_some();
        if let Some(r) = &flight.target_reached {
            // A clean end is the server saying the wait completed.
            if clean_end || !tail_needed || flight.tail_reached {
                return Verdict::Success(r.clone());
            }
        }
        let failed = Failed::message(ErrorCode::RequestTimeout, why_unfinished);
        if flight.processed {
            Verdict::AppendedPending(failed)
        } else {
            Verdict::Confirm(Why::Unknown, failed)
        }
    }

    fn apply(&mut self, now: i64, verdict: Verdict) {
        let code = |f: &Failed| {
            f.info.as_ref().map_or_else(
                || "Unknown".to_owned(),
                |i| i.error_code.as_str().to_owned(),
            )
        };
        match verdict {
            Verdict::Success(r)
                if !r.stage.implies_appended() && self.record.attempts.len() > 1 =>
            {
                self.end_attempt(now, AttemptOutcome::Succeeded);
                self.record.last_result = Some(r);
                self.failed = Failed::default();
                let reason = Some("confirming: a resend accepted at SENT".to_owned());
                self.persist_then(
                    now,
                    IntentState::Unknown,
                    reason,
                    Then::Confirm(Why::Resent),
                );
            }
            Verdict::Success(r) => {
                self.end_attempt(now, AttemptOutcome::Succeeded);
                self.record.last_result = Some(r.clone());
                if r.stage.implies_appended() {
                    self.record.appended = Some(true);
                }
                self.failed = Failed::default();
                let mut outcome = self.outcome_with(Status::Succeeded, self.record.appended);
                outcome.result = Some(r);
                self.settle(now, outcome);
            }
            Verdict::Reject(failed) => {
                self.end_attempt(now, AttemptOutcome::Failed(code(&failed)));
                self.failed = failed;
                // A refusal speaks for this attempt only: an earlier one whose
                // fate was unknown (held at the gateway, say) may still be
                // appended after it, so "not appended" is not claimed then.
                if self.earlier_attempt_unknown() {
                    self.record.appended = None;
                    let outcome = self.outcome_with(Status::Rejected, None).because(
                        "refused on a retry; an earlier attempt's fate is unknown, so it may still be appended",
                    );
                    self.settle(now, outcome);
                } else {
                    self.record.appended = Some(false);
                    let outcome = self.outcome_with(Status::Rejected, Some(false));
                    self.settle(now, outcome);
                }
            }
            Verdict::Conflict(failed) => {
                self.end_attempt(now, AttemptOutcome::Failed(code(&failed)));
                self.failed = failed;
                self.settle(
                    now,
                    self.outcome_with(Status::Conflict, Some(false))
                        .because("version conflict: reload, decide, and retry the same intent"),
                );
            }
            Verdict::RetryLater(after, failed) => {
                self.end_attempt(now, AttemptOutcome::Failed(code(&failed)));
                self.failed = failed;
                self.record.appended = Some(false);
                self.retry_or_give_up(now, after);
            }
            Verdict::AppendedPending(failed) => {
                self.end_attempt(now, AttemptOutcome::Unknown(code(&failed)));
                self.record.appended = Some(true);
                self.failed = Failed::default();
                let mut outcome = self.outcome_with(Status::Succeeded, Some(true));
                outcome.downstream_pending = Some(self.record.command.wait.stage);
                outcome.reason = failed.info.map(|i| i.error_msg);
                self.settle(now, outcome);
            }
            Verdict::Confirm(why, failed) => {
                self.end_attempt(now, AttemptOutcome::Unknown(code(&failed)));
                self.failed = failed;
                let reason = Some(text!("confirming: ", code(&self.failed)));
                self.persist_then(now, IntentState::Unknown, reason, Then::Confirm(why));
            }
        }
    }
}
