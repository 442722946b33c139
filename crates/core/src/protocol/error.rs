//! The one error type of the protocol layer: typed, with enough context to
//! diagnose, and never a panic.

use super::headers::HeaderError;
use super::route::RouteError;
use super::sse::SseError;
use crate::text::text;

/// Anything the protocol layer can refuse.
#[derive(Clone, Debug, PartialEq)]
pub enum ProtocolError {
    /// A JSON document did not have the expected shape (bad syntax, wrong
    /// types, missing required fields, truncated).
    Json {
        /// What was being decoded (`"CommandResult"`, `"SSE data"`, …).
        what: &'static str,
        /// The decoder's message, e.g. "missing field `stage` at line 1 column 9".
        message: String,
    },
    /// An SSE event named after a stage did not carry a CommandResult of that stage.
    StageMismatch {
        /// The SSE event name.
        event: String,
        /// The stage in the data, if any.
        data_stage: Option<String>,
    },
    /// A header name or value was refused.
    Header(HeaderError),
    /// A route could not be built.
    Route(RouteError),
    /// The SSE byte stream was refused.
    Sse(SseError),
}

impl ProtocolError {
    /// A JSON decoding error for `what`.
    pub fn json(what: &'static str, message: impl Into<String>) -> ProtocolError {
        ProtocolError::Json {
            what,
            message: message.into(),
        }
    }

    /// The message (what `Display` writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        match self {
            ProtocolError::Json { what, message } => text!("invalid ", what, ": ", message),
            ProtocolError::StageMismatch { event, data_stage } => text!(
                "SSE event `",
                event,
                "` carries a result of stage ",
                data_stage.as_deref().unwrap_or("<none>")
            ),
            ProtocolError::Header(e) => e.message(),
            ProtocolError::Route(e) => e.message(),
            ProtocolError::Sse(e) => e.message(),
        }
    }
}

impl ::core::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for ProtocolError {}

impl From<HeaderError> for ProtocolError {
    fn from(e: HeaderError) -> Self {
        ProtocolError::Header(e)
    }
}
impl From<RouteError> for ProtocolError {
    fn from(e: RouteError) -> Self {
        ProtocolError::Route(e)
    }
}
impl From<SseError> for ProtocolError {
    fn from(e: SseError) -> Self {
        ProtocolError::Sse(e)
    }
}
