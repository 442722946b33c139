//! The Wow command gateway's wire protocol, as plain data and pure functions.
//!
//! Everything here follows `docs/protocol.md` (Wow v8.10.10); the
//! section numbers in doc comments point into it.

pub mod condition;
#[cfg(test)]
pub(crate) mod declaration;
pub mod error;
pub mod error_code;
pub mod event_stream;
pub mod headers;
pub(crate) mod json_codec;
pub mod json_text;
pub mod json_value;
pub mod response;
pub mod result;
pub mod route;
pub mod sse;
pub mod stage;

#[cfg(test)]
pub(crate) mod test_support;

pub use condition::{BatchQuery, Condition, ConfirmQuery, ListQuery, Operator, QueryShape, Tree};
pub(crate) use condition::{BATCH_LIMIT, NEVER_USED_REQUEST_ID};

pub(crate) use error_code::ErrorClass;
pub use error_code::ErrorCode;
pub use event_stream::{DomainEvent, DomainEventStream};
pub(crate) use headers::CommandHeaders;
pub use headers::{HeaderError, WaitPlan, WaitTail};
pub use json_codec::JsonError;
pub use json_codec::{FromJson, JsonOut, ToJson};
pub(crate) use json_codec::{ObjectReader, ObjectWriter};
pub(crate) use json_value::FloatText;
pub use json_value::{float_text, JsonLimits, JsonValue, MAX_NESTING};
pub use response::{JsonResponse, ResponseBody, StreamElement};
pub use result::{BindingError, CommandResult, ErrorInfo, FunctionInfo, FunctionKind};
pub(crate) use route::{check_base_url, check_path, is_command_method};
pub use route::{AggregateRoute, RouteError};
pub use sse::{SseDecoder, SseError, SseEvent};
pub use stage::CommandStage;
