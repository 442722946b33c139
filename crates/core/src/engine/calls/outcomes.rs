//! What every call shares: its settling, and the outcomes its failures carry.

use crate::engine::io::{CallId, Do, Reply};
use crate::engine::{Engine, Watched};
use crate::journal::{IntentRecord, JournalError, StoreError};
use crate::machine::outcome::error_info;
use crate::machine::{Outcome, Status};
use crate::protocol::ErrorCode;
use crate::text::text;

impl Engine {
    pub(super) fn watch(&mut self, call: CallId, watched: bool) {
        if watched && call != 0 {
            self.watched.push(Watched {
                call,
                record: None,
                sent: false,
                left: false,
            });
        }
    }

    /// Settles `call` (once: a call its caller left is settled already).
    pub(super) fn settle(&mut self, call: CallId, reply: Reply) {
        if call == 0 {
            return;
        }
        let left = match self.watched.iter().position(|w| w.call == call) {
            Some(i) => self.watched.swap_remove(i).left,
            None => false,
        };
        if !left {
            self.tell(Do::Settle(call, reply));
        }
    }

    /// Settles `call` with a `CommandError` carrying `outcome`, before any task.
    pub(super) fn fail_now(&mut self, call: CallId, outcome: Outcome) {
        self.settle(call, Reply::Failed(Box::new(outcome)));
        self.run();
    }
}

/// Another user's intent, found by a call that names an intent: answered
/// as an id this journal does not hold (nothing of it is told).
pub(super) fn unseen_if_theirs(
    found: Result<Option<IntentRecord>, JournalError>,
) -> Result<Option<IntentRecord>, JournalError> {
    match found {
        Err(JournalError::OfAnotherUser) => Ok(None),
        found => found,
    }
}

/// `InvalidCommand`: a call the journal cannot act on.
pub fn invalid(message: &str) -> Outcome {
    Outcome::failed("InvalidCommand", message, Status::Rejected, Some(false))
}

/// `SigningOut`: a call that would write or send an intent while its user
/// signs out on this client (`signOut`, `clear`): nothing is written or
/// sent, so nothing of it outlives the sign-out or leaves with its credentials.
pub(super) fn signing_out() -> Outcome {
    let why =
        "the user is signing out on this client (signOut or clear): nothing was written or sent";
    Outcome::failed("SigningOut", why, Status::Rejected, Some(false))
}

pub(super) fn no_intent(id: &str) -> Outcome {
    invalid(&text!("no intent `", id, "` in this namespace"))
}

/// A journal failure as the outcome its `CommandError` carries.
pub fn journal_failure(e: JournalError) -> Outcome {
    let (code, status) = match &e {
        JournalError::Storage(StoreError::Unavailable { .. }) => {
            ("StorageUnavailable", Status::Unknown)
        }
        JournalError::Storage(StoreError::Conflict { .. }) => ("IntentBusy", Status::Unknown),
        JournalError::IntentKeyReused { .. } => ("IntentKeyReused", Status::Rejected),
        JournalError::MissingAggregateId => ("InvalidCommand", Status::Rejected),
        JournalError::NotInConflict { .. } => ("NotInConflict", Status::Rejected),
        JournalError::NotWithdrawable { .. } => ("NotWithdrawable", Status::Rejected),
        JournalError::OfAnotherUser => ("IntentOfAnotherUser", Status::Rejected),
    };
    let mut outcome = Outcome::failed(code, &e.message(), status, Some(false));
    if let JournalError::IntentKeyReused {
        intent_key,
        request_id,
    } = e
    {
        outcome.intent_key = Some(intent_key);
        outcome.request_id = request_id.clone();
        outcome.intent_id = request_id;
        outcome.appended = None;
    }
    outcome
}

/// The `Aborted` error of a caller that left: what its drive wrote last,
/// with `appended: false` while no request can have left.
pub(super) fn aborted(record: Option<&IntentRecord>, sent: bool) -> Outcome {
    let mut outcome = match record {
        Some(r) => Outcome::from_record(r),
        None => Outcome::failed("Aborted", "", Status::Unknown, None),
    };
    outcome.status = Status::Unknown;
    outcome.appended = if sent { None } else { Some(false) };
    outcome.downstream_pending = None;
    outcome.appended_version = None;
    outcome.appended_command_id = None;
    outcome.error = Some(error_info(
        ErrorCode::Other("Aborted".into()),
        "the caller's wait was aborted",
    ));
    outcome.reason = Some(if sent {
        "aborted: the outcome is not known; the intent is still driven".into()
    } else {
        "aborted before anything was sent; the intent is still driven".into()
    });
    outcome
}
