//! What an intent ended in, in the words the JS API uses.

use serde::Serialize;

use crate::journal::{IntentRecord, IntentState};
use crate::protocol::{
    CommandResult, CommandStage, ErrorCode, ErrorInfo, JsonOut, ObjectWriter, ToJson,
};

/// The outcome's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The target stage was reached, or the append is confirmed.
    Succeeded,
    /// The command was refused.
    Rejected,
    /// Not known; the intent stays persisted for confirmation.
    Unknown,
    /// A version or identity conflict: the caller decides.
    Conflict,
    /// History could not be asked: surfaced for a person or an operations path.
    Escalated,
}

/// The end of one drive of an intent.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// The status.
    pub status: Status,
    /// The intent (= requestId).
    pub intent_id: String,
    /// The requestId every attempt carried.
    pub request_id: String,
    /// The business key, if any.
    pub intent_key: Option<String>,
    /// Whether the intent's events are in the history: `None` = not confirmed.
    pub appended: Option<bool>,
    /// The last CommandResult (the final one on success).
    pub result: Option<CommandResult>,
    /// The failure's code and message, also when no CommandResult came
    /// (timeouts, proxies, transport errors).
    pub error: Option<ErrorInfo>,
    /// Appended, but the wait stage (past PROCESSED) was not observed.
    pub downstream_pending: Option<CommandStage>,
    /// The appended stream's version and commandId, when history was asked.
    pub appended_version: Option<i64>,
    /// The commandId that appended, when history was asked.
    pub appended_command_id: Option<String>,
    /// Why it is unknown, escalated or in conflict.
    pub reason: Option<String>,
    /// How many attempts were sent.
    pub attempts: u32,
}

impl Status {
    /// The wire name (`"succeeded"`, `"rejected"`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Succeeded => "succeeded",
            Status::Rejected => "rejected",
            Status::Unknown => "unknown",
            Status::Conflict => "conflict",
            Status::Escalated => "escalated",
        }
    }
}

impl ToJson for Status {
    fn write_json(&self, out: &mut JsonOut) {
        self.as_str().write_json(out)
    }
}

impl ToJson for Outcome {
    fn write_json(&self, out: &mut JsonOut) {
        ObjectWriter::new(out)
            .put("status", &self.status)
            .put("intentId", &self.intent_id)
            .put("requestId", &self.request_id)
            .put("intentKey", &self.intent_key)
            .put("appended", &self.appended)
            .put("result", &self.result)
            .put("error", &self.error)
            .put("downstreamPending", &self.downstream_pending)
            .put("appendedVersion", &self.appended_version)
            .put("appendedCommandId", &self.appended_command_id)
            .put("reason", &self.reason)
            .put("attempts", &self.attempts)
            .done()
    }
}

/// What `sendAndWait` resolves with for an intent that succeeded: the
/// gateway's CommandResult, or, for one confirmed by history alone, what
/// history says of it in a CommandResult's fields (`confirmedByHistory`).
pub struct SuccessValue<'a>(pub &'a Outcome);

impl ToJson for SuccessValue<'_> {
    fn write_json(&self, out: &mut JsonOut) {
        let o = self.0;
        match &o.result {
            Some(r) if r.is_succeeded() => r.write_json(out),
            _ => ObjectWriter::new(out)
                .put("requestId", &o.request_id)
                .put("commandId", &o.appended_command_id)
                .put("aggregateVersion", &o.appended_version)
                .put("errorCode", &"Ok")
                .put("succeeded", &true)
                .put("confirmedByHistory", &true)
                .done(),
        }
    }
}

impl Outcome {
    /// Says what usually causes a 404 with no stage on a command not marked
    /// `create`: no route (an aggregate that does not exist is NotFound at
    /// PROCESSED, with a CommandResult), because a create goes to
    /// `/{resource}/{action}`, not `/{resource}/{id}/{action}`. Whether the
    /// create route exists would take another request: the hint is short.
    pub(crate) fn with_create_hint(mut self, create: bool) -> Outcome {
        if let Some(e) = self.error.as_mut().filter(|e| {
            !create
                && self.result.is_none()
                && matches!(e.error_code.as_str(), "NotFound" | "HttpStatus404")
        }) {
            e.error_msg.push_str(" (a create needs create: true)");
        }
        self
    }

    /// The outcome a settled or stored record stands for (a replayed key,
    /// a record listed by a UI).
    pub(crate) fn from_record(record: &IntentRecord) -> Outcome {
        let status = match record.state {
            IntentState::Succeeded => Status::Succeeded,
            IntentState::Rejected | IntentState::Withdrawn => Status::Rejected,
            IntentState::Conflict => Status::Conflict,
            IntentState::Escalated => Status::Escalated,
            IntentState::Pending
            | IntentState::Sending
            | IntentState::Unknown
            | IntentState::Queued => Status::Unknown,
        };
        let said = |code: &str, msg: &str| error_info(ErrorCode::Other(code.into()), msg);
        let error = match (record.state, &record.waits_for) {
            (IntentState::Withdrawn, _) => Some(said(
                "Withdrawn",
                "withdrawn by the caller before it was sent: nothing was sent",
            )),
            (IntentState::Queued, waits_for) => Some(said(
                "Queued",
                &crate::text::text!(
                    "nothing was sent yet: it waits for intent ",
                    waits_for.as_deref().unwrap_or("(an earlier one)"),
                    " of scope `",
                    record.scope.as_deref().unwrap_or_default(),
                    "` and is sent in its turn"
                ),
            )),
            _ => record
                .last_result
                .as_ref()
                .filter(|r| !r.is_succeeded())
                .map(ErrorInfo::from),
        };
        let never_sent = matches!(record.state, IntentState::Queued | IntentState::Withdrawn)
            && record.attempts.is_empty();
        Outcome {
            status,
            intent_id: record.intent_id.clone(),
            request_id: record.request_id.clone(),
            intent_key: record.intent_key.clone(),
            appended: if never_sent {
                Some(false)
            } else {
                record.appended
            },
            result: record.last_result.clone(),
            error,
            downstream_pending: None,
            appended_version: record.appended_version,
            appended_command_id: None,
            reason: record.reason.clone(),
            attempts: record.attempts.len() as u32,
        }
    }

    /// An outcome for a failure no command was judged by: its code and message.
    pub fn failed(code: &str, message: &str, status: Status, appended: Option<bool>) -> Outcome {
        Outcome {
            status,
            intent_id: String::new(),
            request_id: String::new(),
            intent_key: None,
            appended,
            result: None,
            error: Some(error_info(ErrorCode::Other(code.to_owned()), message)),
            downstream_pending: None,
            appended_version: None,
            appended_command_id: None,
            reason: Some(message.to_owned()),
            attempts: 0,
        }
    }

    /// The outcome with `reason` as its reason.
    pub(crate) fn because(mut self, reason: &str) -> Outcome {
        self.reason = Some(reason.to_owned());
        self
    }

    /// The error code, when the outcome is a failure.
    pub fn error_code(&self) -> Option<&ErrorCode> {
        self.error.as_ref().map(|e| &e.error_code)
    }
}

/// An ErrorInfo for a failure the client itself observed.
pub(crate) fn error_info(code: ErrorCode, msg: &str) -> ErrorInfo {
    ErrorInfo {
        error_code: code,
        error_msg: msg.to_owned(),
        binding_errors: Vec::new(),
        succeeded: Some(false),
    }
}
