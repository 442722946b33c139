//! Reading answers: JSON mode (PROTOCOL §2.2) and SSE elements (§3.2).

use super::error::ProtocolError;
use super::error_code::{ErrorClass, ErrorCode};
use super::json_codec::{FromJson, ObjectReader};
use super::json_value::JsonValue;
use super::result::{CommandResult, ErrorInfo};
use super::stage::CommandStage;

/// What a response body turned out to be.
// Decoded once per response and moved out at once; boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum ResponseBody {
    /// A CommandResult (it has a `stage`).
    CommandResult(CommandResult),
    /// A plain ErrorInfo (an `errorCode` but no `stage`).
    ErrorInfo(ErrorInfo),
    /// Not a Wow body: a proxy's HTML page, an empty body, other JSON.
    Other {
        /// Why it is not a Wow body (the decoder's message, or "no errorCode").
        reason: String,
    },
}

impl ResponseBody {
    /// Decodes a body already parsed into a [`JsonValue`] (the wasm build:
    /// `JSON.parse`, then each type's own field list).
    /// Never fails: what is not a Wow body is [`ResponseBody::Other`].
    pub fn from_json(value: JsonValue) -> ResponseBody {
        let has = |key: &str| {
            value
                .get(key)
                .is_some_and(|v| !matches!(v, JsonValue::Null))
        };
        let read = if has("stage") {
            CommandResult::from_json(value).map(ResponseBody::CommandResult)
        } else if has("errorCode") {
            ErrorInfo::from_json(value).map(ResponseBody::ErrorInfo)
        } else {
            // Not an object is the wrong type; an object is no Wow body.
            ObjectReader::of(value).map(|_| ResponseBody::Other {
                reason: "no errorCode".to_owned(),
            })
        };
        read.unwrap_or_else(|e| ResponseBody::Other {
            reason: e.message(),
        })
    }

    /// Decodes JSON text (native callers and tests).
    #[cfg(any(test, feature = "json-text"))]
    pub fn from_json_text(text: &str) -> ResponseBody {
        match serde_json::from_str(text) {
            Ok(value) => ResponseBody::from_json(value),
            Err(e) => ResponseBody::Other {
                reason: e.to_string(),
            },
        }
    }

    /// The error code this body reports, if it is a Wow body.
    pub fn error_code(&self) -> Option<&ErrorCode> {
        match self {
            ResponseBody::CommandResult(r) => Some(&r.error_code),
            ResponseBody::ErrorInfo(i) => Some(&i.error_code),
            ResponseBody::Other { .. } => None,
        }
    }
}

/// A JSON-mode answer: status, `Wow-Error-Code` and the body.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonResponse {
    /// HTTP status.
    pub status: u16,
    /// The `Wow-Error-Code` header, when present.
    pub error_code_header: Option<String>,
    /// The body.
    pub body: ResponseBody,
}

impl JsonResponse {
    /// The successful result, when status, header and body all say success.
    pub fn success(&self) -> Option<&CommandResult> {
        match &self.body {
            ResponseBody::CommandResult(r)
                if (200..300).contains(&self.status)
                    && r.is_succeeded()
                    && self.error_code_header.as_deref().is_none_or(|h| h == "Ok") =>
            {
                Some(r)
            }
            _ => None,
        }
    }

    /// The failure's class, or `None` on success. A body that is not a Wow
    /// body is judged by its status alone: a 5xx, 408 or a 2xx without a
    /// result proves nothing (Unknown), a 429 is Transient, any other 4xx
    /// came from something in front of the gateway and was not sent.
    pub(crate) fn failure_class(&self) -> Option<ErrorClass> {
        if self.success().is_some() {
            return None;
        }
        match &self.body {
            ResponseBody::CommandResult(r) if r.error_code.is_ok() => Some(ErrorClass::Unknown),
            ResponseBody::CommandResult(r) => r.error_code.classify(Some(r.stage)),
            ResponseBody::ErrorInfo(i) => {
                Some(i.error_code.classify(None).unwrap_or(ErrorClass::Unknown))
            }
            ResponseBody::Other { .. } => Some(match self.status {
                429 => ErrorClass::Transient,
                408 => ErrorClass::Unknown,
                400..=499 => ErrorClass::RejectedBeforeSend,
                _ => ErrorClass::Unknown,
            }),
        }
    }
}

/// One element of a `text/event-stream` command response.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamElement {
    /// An event named after a stage: a CommandResult of that stage, which
    /// may itself have failed (`succeeded:false`).
    Stage(CommandResult),
    /// An event named after an error code (`errorResume`): the stream ends
    /// after it. Its data is a CommandResult or a plain ErrorInfo.
    Error {
        /// The event name, read as an error code.
        code: ErrorCode,
        /// The data.
        body: ResponseBody,
    },
}

impl StreamElement {
    /// Classifies an SSE event from its name and decoded data.
    pub fn from_event(
        event: Option<&str>,
        body: ResponseBody,
    ) -> Result<StreamElement, ProtocolError> {
        let name = event.unwrap_or("message");
        if let Some(stage) = CommandStage::from_wire(name) {
            return match body {
                ResponseBody::CommandResult(r) if r.stage == stage => Ok(StreamElement::Stage(r)),
                ResponseBody::CommandResult(r) => Err(ProtocolError::StageMismatch {
                    event: name.to_owned(),
                    data_stage: Some(r.stage.as_str().to_owned()),
                }),
                ResponseBody::ErrorInfo(_) | ResponseBody::Other { .. } => {
                    Err(ProtocolError::StageMismatch {
                        event: name.to_owned(),
                        data_stage: None,
                    })
                }
            };
        }
        Ok(StreamElement::Error {
            code: ErrorCode::parse(name),
            body,
        })
    }

    /// Whether this element reports success (checked on every element).
    pub fn is_succeeded(&self) -> bool {
        matches!(self, StreamElement::Stage(r) if r.is_succeeded())
    }

    /// The CommandResult this element carries, if any.
    pub fn command_result(&self) -> Option<&CommandResult> {
        match self {
            StreamElement::Stage(r) => Some(r),
            StreamElement::Error {
                body: ResponseBody::CommandResult(r),
                ..
            } => Some(r),
            StreamElement::Error { .. } => None,
        }
    }
}

/// A stage stream's element as the caller reads it (pushed to its
/// stream): its CommandResult, or an error event's ErrorInfo (its code
/// alone when its data said nothing more).
impl super::json_codec::ToJson for StreamElement {
    fn write_json(&self, out: &mut super::json_codec::JsonOut) {
        match self {
            StreamElement::Stage(r)
            | StreamElement::Error {
                body: ResponseBody::CommandResult(r),
                ..
            } => r.write_json(out),
            StreamElement::Error {
                body: ResponseBody::ErrorInfo(info),
                ..
            } => info.write_json(out),
            StreamElement::Error { code, .. } => ErrorInfo {
                error_code: code.clone(),
                error_msg: String::new(),
                binding_errors: Vec::new(),
                succeeded: Some(false),
            }
            .write_json(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    const SUCCESS: &str = include_str!("../../../../tests/fixtures/command_result_success.json");
    const DUPLICATE: &str =
        include_str!("../../../../tests/fixtures/command_result_duplicate.json");

    fn json(status: u16, header: Option<&str>, text: &str) -> JsonResponse {
        JsonResponse {
            status,
            error_code_header: header.map(str::to_owned),
            body: ResponseBody::from_json_text(text),
        }
    }

    #[test]
    fn json_mode_success_needs_status_header_and_body_to_agree() {
        let ok = json(200, Some("Ok"), SUCCESS);
        assert_eq!(ok.success().unwrap().aggregate_version, Some(1));
        assert_eq!(ok.failure_class(), None);
        // A 200 whose body says nothing useful proves nothing.
        let odd = json(200, Some("Ok"), "{}");
        assert!(odd.success().is_none());
        assert_eq!(odd.failure_class(), Some(ErrorClass::Unknown));
        let mismatch = json(500, Some("InternalServerError"), SUCCESS);
        assert_eq!(mismatch.failure_class(), Some(ErrorClass::Unknown));
    }

    #[test]
    fn json_mode_tells_command_results_from_error_infos_from_proxies() {
        let dup = json(400, Some("DuplicateRequestId"), DUPLICATE);
        assert!(matches!(dup.body, ResponseBody::CommandResult(_)));
        assert_eq!(dup.failure_class(), Some(ErrorClass::Duplicate));

        let timeout = json(
            408,
            Some("RequestTimeout"),
            r#"{"errorCode":"RequestTimeout","errorMsg":"Did not observe any item","succeeded":false}"#,
        );
        assert!(matches!(timeout.body, ResponseBody::ErrorInfo(_)));
        assert_eq!(timeout.failure_class(), Some(ErrorClass::Unknown));

        let proxy = json(503, None, "<html><body>Service Unavailable</body></html>");
        assert!(matches!(proxy.body, ResponseBody::Other { .. }));
        assert_eq!(proxy.failure_class(), Some(ErrorClass::Unknown));
        let auth = json(401, None, "");
        assert_eq!(auth.failure_class(), Some(ErrorClass::RejectedBeforeSend));
        let limited = json(429, None, "slow down");
        assert_eq!(limited.failure_class(), Some(ErrorClass::Transient));
        let trailing = ResponseBody::from_json_text(&format!("{SUCCESS} x"));
        assert!(matches!(trailing, ResponseBody::Other { .. }));
        let half = ResponseBody::from_json_text(&SUCCESS[..40]);
        assert!(matches!(half, ResponseBody::Other { .. }));
    }

    /// A body is read by its own type's field list: a stage makes it a
    /// CommandResult (every required field there, each of its type), an
    /// `errorCode` alone an ErrorInfo; `null` counts as absent for telling them.
    #[test]
    fn a_body_is_told_by_its_stage_then_read_by_its_own_field_list() {
        let reason = |text: &str| match ResponseBody::from_json_text(text) {
            ResponseBody::Other { reason } => reason,
            body => panic!("{body:?}"),
        };
        let no_id = SUCCESS.replace("\"id\":", "\"idle\":");
        assert_eq!(reason(&no_id), "a missing field `id`");
        let bad_version =
            SUCCESS.replace("\"aggregateVersion\": 1", "\"aggregateVersion\": \"one\"");
        assert_eq!(
            reason(&bad_version),
            "a value of the wrong type `aggregateVersion`"
        );
        // A null code is no code: before, it was read as `Ok` (a success).
        let null_code = SUCCESS.replace("\"errorCode\": \"Ok\"", "\"errorCode\": null");
        assert_eq!(reason(&null_code), "a value of the wrong type `errorCode`");
        let null_result = SUCCESS.replace("\"result\": {}", "\"result\": null");
        let ResponseBody::CommandResult(r) = ResponseBody::from_json_text(&null_result) else {
            panic!("a null result is an empty one");
        };
        assert_eq!(r.result, JsonValue::empty_object());
        let null_stage = r#"{"stage":null,"errorCode":"NotFound","errorMsg":"gone"}"#;
        assert!(matches!(
            ResponseBody::from_json_text(null_stage),
            ResponseBody::ErrorInfo(ErrorInfo { error_msg, .. }) if error_msg == "gone"
        ));
        // A message or a list a gateway or a proxy writes as null is absent.
        let nulls = r#"{"errorCode":"NotFound","errorMsg":null,"bindingErrors":null}"#;
        assert!(matches!(
            ResponseBody::from_json_text(nulls),
            ResponseBody::ErrorInfo(ErrorInfo { error_code: ErrorCode::NotFound, error_msg, binding_errors, .. })
                if error_msg.is_empty() && binding_errors.is_empty()
        ));
        let nulls = SUCCESS
            .replace(
                "\"errorMsg\": \"\"",
                "\"errorMsg\": null, \"bindingErrors\": null",
            )
            .replace("\"signalTime\": 1764297052692", "\"signalTime\": null");
        let ResponseBody::CommandResult(r) = ResponseBody::from_json_text(&nulls) else {
            panic!("{:?}", ResponseBody::from_json_text(&nulls));
        };
        assert_eq!((r.error_msg.as_str(), r.signal_time), ("", 0));
        // A key given twice counts by its last value, as the readers take it.
        let twice = r#"{"stage":"PROCESSED","stage":null,"errorCode":"NotFound"}"#;
        assert!(matches!(
            ResponseBody::from_json_text(twice),
            ResponseBody::ErrorInfo(_)
        ));
        assert_eq!(reason("[1]"), reason("\"text\""), "not an object");
        assert_eq!(reason(r#"{"error":"x"}"#), "no errorCode");
    }

    #[test]
    fn sse_elements_tell_stage_events_from_error_events() {
        let stage =
            StreamElement::from_event(Some("PROCESSED"), ResponseBody::from_json_text(SUCCESS))
                .unwrap();
        assert!(stage.is_succeeded());

        let dup = StreamElement::from_event(
            Some("DuplicateRequestId"),
            ResponseBody::from_json_text(DUPLICATE),
        )
        .unwrap();
        assert!(!dup.is_succeeded());
        assert_eq!(dup.command_result().unwrap().stage, CommandStage::Sent);

        let timeout = StreamElement::from_event(
            Some("RequestTimeout"),
            ResponseBody::from_json_text(r#"{"errorCode":"RequestTimeout","errorMsg":"t"}"#),
        )
        .unwrap();
        assert!(matches!(
            timeout,
            StreamElement::Error {
                code: ErrorCode::RequestTimeout,
                body: ResponseBody::ErrorInfo(_)
            }
        ));
        assert!(timeout.command_result().is_none());

        let mismatch =
            StreamElement::from_event(Some("SNAPSHOT"), ResponseBody::from_json_text(SUCCESS));
        assert!(matches!(mismatch, Err(ProtocolError::StageMismatch { .. })));
        let garbage = StreamElement::from_event(Some("SENT"), ResponseBody::from_json_text("nope"));
        assert!(garbage.is_err());
    }

    #[test]
    fn a_failed_stage_event_is_a_failed_element_not_an_error_event() {
        let failed = SUCCESS
            .replace("\"errorCode\": \"Ok\"", "\"errorCode\": \"IllegalState\"")
            .replace("\"succeeded\": true", "\"succeeded\": false");
        let e = StreamElement::from_event(Some("PROCESSED"), ResponseBody::from_json_text(&failed))
            .unwrap();
        assert!(matches!(e, StreamElement::Stage(_)));
        assert!(!e.is_succeeded());
    }
}
