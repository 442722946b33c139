//! The messages the engine writes for others, each as JSON text written
//! once, here: an intent's announcement (other tabs, `subscribe`, queued
//! callers), a lifecycle event for `onEvent`, the probe's word for the
//! other tabs and its event for `onHistory`. A listener's event is only
//! written when someone listens.

use crate::journal::IntentRecord;
use crate::machine::Availability;
use crate::protocol::{JsonOut, ObjectWriter};

/// An intent written at `revision`: `{ intentId, state, revision }`, which
/// tabs on every build read, and beside them every field of a version-1
/// intent event, as `client.subscribe` delivers it (`IntentEvent`: null
/// where the record has nothing).
pub fn announcement(record: &IntentRecord, revision: u64) -> String {
    let error_code = record
        .last_result
        .as_ref()
        .map(|r| r.error_code.as_str())
        .filter(|code| *code != "Ok");
    let mut out = JsonOut::new(no_floats);
    ObjectWriter::new(&mut out)
        .put("intentId", &record.intent_id)
        .put("state", &record.state)
        .put("revision", &revision)
        .put("version", &1u32)
        .put("user", &record.user)
        .put("intentKey", &record.intent_key)
        .put("requestId", &record.request_id)
        .put("aggregate", &record.aggregate)
        .put("attempts", &(record.attempts.len() as u32))
        .put("appended", &record.appended)
        .put("reason", &record.reason)
        .put("errorCode", &error_code)
        .put("scope", &record.scope)
        .put("waitsFor", &record.waits_for)
        .put("at", &record.updated_at)
        .done();
    out.text
}

/// What a lifecycle event adds to the record's fields.
#[derive(Clone, Copy, Debug)]
pub enum Detail<'a> {
    /// No field beyond the record's.
    None,
    /// `attemptSent`'s traceparent.
    Trace(&'a str),
    /// `retryScheduled`'s due time.
    RetryAt(i64),
    /// `confirmAnswered`'s answer (`appended`, `notAppended`, `unavailable`).
    Answer(&'a str),
}

/// `onEvent`'s lifecycle event `kind` of `record` at `at`: its identity,
/// the last attempt's number, commandId, deadline and what ended its wait,
/// the wait stage, the error code. Nothing secret: no body, no headers but
/// the traceparent.
pub fn lifecycle(kind: &str, at: i64, record: &IntentRecord, detail: Detail) -> String {
    let last = record.attempts.last();
    let result = record.last_result.as_ref();
    let mut out = JsonOut::new(no_floats);
    let mut w = ObjectWriter::new(&mut out);
    w.put("version", &1u32)
        .put("kind", &kind)
        .put("at", &at)
        .put("intentId", &record.intent_id)
        .put("intentKey", &record.intent_key)
        .put("requestId", &record.request_id)
        .put("aggregate", &record.aggregate)
        .put("state", &record.state)
        .put("waitStage", &record.command.wait.stage)
        .put("serverWaitMs", &record.command.wait.timeout_ms)
        .put("attempt", &last.map_or(0, |a| a.number))
        .put("commandId", &last.and_then(|a| a.command_id.as_ref()))
        .put("sentAt", &last.map(|a| a.sent_at))
        .put(
            "callerTimeoutMs",
            &last.and_then(|a| {
                a.caller_deadline
                    .map(|d| d - a.sent_at)
                    .filter(|ms| *ms != 0)
            }),
        )
        .put("endedAt", &last.and_then(|a| a.ended_at))
        .put("waitEndedBy", &last.and_then(|a| a.wait_ended_by))
        .put("answer", &last.and_then(|a| a.outcome.as_ref()))
        .put("errorCode", &result.map(|r| r.error_code.as_str()))
        .put("appended", &record.appended)
        .put("reason", &record.reason);
    if kind == "stage" {
        if let Some(r) = result {
            w.put("stage", &r.stage).put("succeeded", &r.is_succeeded());
        }
    }
    match detail {
        Detail::None => {}
        Detail::Trace(t) => {
            w.put("traceparent", &t);
        }
        Detail::RetryAt(at) => {
            w.put("retryAt", &at);
        }
        Detail::Answer(a) => {
            w.put("answerOfHistory", &a);
        }
    }
    w.done();
    out.text
}

/// The probe's word for the other tabs: `{history: true, source, from,
/// available, …}`; `from` tells this probe's own messages apart.
pub(crate) fn availability_message(source: &str, from: u64, is: Availability) -> String {
    let mut out = JsonOut::new(no_floats);
    let mut w = ObjectWriter::new(&mut out);
    w.put("history", &true)
        .put("source", &source)
        .put("from", &from);
    availability(&mut w, is).done();
    out.text
}

/// `onHistory`'s event: `historyDown` after each failed look, `historyBack`
/// once one is answered (here or heard).
pub(crate) fn history_event(at: i64, was: Availability, is: Availability, waiting: u32) -> String {
    let mut out = JsonOut::new(no_floats);
    let mut w = ObjectWriter::new(&mut out);
    w.put("version", &1u32)
        .put("at", &at)
        .put("waiting", &waiting);
    match (was, is) {
        (Availability::Down { since, .. }, Availability::Up) => w
            .put("kind", &"historyBack")
            .put("available", &true)
            .put("since", &since)
            .done(),
        _ => availability(w.put("kind", &"historyDown"), is).done(),
    }
    out.text
}

/// An availability's fields: `available`, and while history is down
/// `since`, `nextLookAt` and `failures`.
pub(crate) fn availability<'w, 'a>(
    w: &'w mut ObjectWriter<'a>,
    a: Availability,
) -> &'w mut ObjectWriter<'a> {
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

/// These messages carry no non-integral numbers.
fn no_floats(_: f64, out: &mut String) {
    out.push_str("null");
}
