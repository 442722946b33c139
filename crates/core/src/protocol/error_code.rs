//! Error codes (PROTOCOL §2.3), their HTTP status (§2.4) and the coarse
//! classification the state machine starts from.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::stage::CommandStage;

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $wire:literal => $status:literal, )*) => {
        /// A Wow error code. Every code the server defines is a variant;
        /// domain codes (an event implementing `ErrorInfo`, e.g.
        /// `OrderPayDuplicated`) and Spring status names are [`ErrorCode::Other`].
        #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )*
            /// Any code the server did not define: domain codes, Spring status names.
            Other(String),
        }

        impl ErrorCode {
            /// Every code the server defines, in the reference's order.
            pub(crate) const KNOWN: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )* ];

            /// The wire string.
            pub fn as_str(&self) -> &str {
                match self {
                    $( ErrorCode::$variant => $wire, )*
                    ErrorCode::Other(code) => code,
                }
            }

            /// Parses a wire string; unknown strings become [`ErrorCode::Other`].
            /// A lookup in `ErrorCode::KNOWN`, not a `match` on every
            /// string (a chain of comparisons several times its size).
            pub fn parse(code: &str) -> ErrorCode {
                ErrorCode::KNOWN
                    .iter()
                    .find(|known| known.as_str() == code)
                    .cloned()
                    .unwrap_or_else(|| ErrorCode::Other(code.to_owned()))
            }

            /// The HTTP status the server answers with in JSON mode (PROTOCOL §2.4);
            /// unmapped codes are 400.
            pub fn http_status(&self) -> u16 {
                match self {
                    $( ErrorCode::$variant => $status, )*
                    ErrorCode::Other(_) => 400,
                }
            }
        }
    };
}

error_codes! {
    /// `Ok`: success (the default when a body has no `errorCode`).
    #[default]
    Ok = "Ok" => 200,
    /// Resource (or aggregate) not found.
    NotFound = "NotFound" => 404,
    /// Generic bad request (unmapped exception).
    BadRequest = "BadRequest" => 400,
    /// `IllegalArgumentException`: bad input, or a handler's `require`.
    IllegalArgument = "IllegalArgument" => 400,
    /// `IllegalStateException`: usually a handler's `check` (business rule).
    IllegalState = "IllegalState" => 400,
    /// The wait deadline passed; says nothing about the append.
    RequestTimeout = "RequestTimeout" => 408,
    /// Rate limited.
    TooManyRequests = "TooManyRequests" => 429,
    /// The requestId was seen before (pre-check at SENT or store at PROCESSED).
    DuplicateRequestId = "DuplicateRequestId" => 400,
    /// Jakarta / `CommandValidator` validation failed.
    CommandValidation = "CommandValidation" => 400,
    /// A command rewriter produced no command.
    RewriteNoCommand = "RewriteNoCommand" => 400,
    /// Concurrent append conflict (after the server's own retries).
    EventVersionConflict = "EventVersionConflict" => 409,
    /// A create raced another create of the same id.
    DuplicateAggregateId = "DuplicateAggregateId" => 400,
    /// `Command-Aggregate-Version` did not match the current version.
    CommandExpectVersionConflict = "CommandExpectVersionConflict" => 409,
    /// Event sourcing met an unexpected version.
    SourcingVersionConflict = "SourcingVersionConflict" => 409,
    /// The aggregate is deleted.
    IllegalAccessDeletedAggregate = "IllegalAccessDeletedAggregate" => 410,
    /// The caller does not own the aggregate.
    IllegalAccessOwnerAggregate = "IllegalAccessOwnerAggregate" => 403,
    /// The aggregate belongs to another space.
    IllegalAccessSpaceAggregate = "IllegalAccessSpaceAggregate" => 400,
    /// Unexpected server error.
    InternalServerError = "InternalServerError" => 500,
    /// A batch route task failed.
    BatchTaskError = "BatchTaskError" => 400,
    /// The request's media type is not supported.
    UnsupportedMediaType = "UnsupportedMediaType" => 415,
    /// BI deployment inspection: inconsistent.
    BiDeploymentInspectionInconsistent = "BiDeploymentInspectionInconsistent" => 502,
    /// BI deployment inspection: unavailable.
    BiDeploymentInspectionUnavailable = "BiDeploymentInspectionUnavailable" => 503,
    /// BI deployment inspection: timed out.
    BiDeploymentInspectionTimeout = "BiDeploymentInspectionTimeout" => 504,
    /// Wow 9: a query body that does not read (its `bindingErrors` say where).
    QuerySchemaValidation = "QuerySchemaValidation" => 400,
    /// Wow 9: the server requires an authenticated query scope.
    IllegalAccessQueryScope = "IllegalAccessQueryScope" => 403,
}

/// What an error says about the command, before history is consulted.
///
/// This is the first half of the decision; the state machine adds what it
/// knows about the transport and, when the append is in doubt, confirms
/// against the event history (DESIGN rule 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ErrorClass {
    /// Refused by the gateway before the command reached the bus: nothing was stored.
    RejectedBeforeSend,
    /// The domain refused the command (a business rule, a missing aggregate,
    /// an access check). Whether events were stored still needs confirming:
    /// an error *event* is stored and fails the command all the same.
    BusinessRejection,
    /// An optimistic-concurrency or identity conflict: the caller decides.
    Conflict,
    /// The requestId was seen before: the intent is probably appended
    /// (a Bloom-filter false positive is possible); confirm.
    Duplicate,
    /// Refused for load reasons; retry after a delay, once confirmed.
    Transient,
    /// The code proves nothing about the append (timeouts, 5xx).
    Unknown,
}

impl ErrorCode {
    /// Whether this is `Ok`.
    pub fn is_ok(&self) -> bool {
        matches!(self, ErrorCode::Ok)
    }

    /// Classifies a failure code seen at `stage` (`None` when the answer was a
    /// plain ErrorInfo without a stage). `Ok` has no class.
    ///
    /// A validation-type code at SENT (or without a stage) is a pre-send
    /// rejection; the same code at PROCESSED came from a handler's `require`
    /// and is a business rejection.
    pub(crate) fn classify(&self, stage: Option<CommandStage>) -> Option<ErrorClass> {
        use ErrorCode::*;
        let before_bus = matches!(stage, None | Some(CommandStage::Sent));
        Some(match self {
            Ok => return None,
            IllegalArgument | BadRequest | CommandValidation | RewriteNoCommand
            | UnsupportedMediaType
                if before_bus =>
            {
                ErrorClass::RejectedBeforeSend
            }
            IllegalArgument | BadRequest | CommandValidation | RewriteNoCommand
            | UnsupportedMediaType => ErrorClass::BusinessRejection,
            NotFound
            | IllegalState
            | IllegalAccessDeletedAggregate
            | IllegalAccessOwnerAggregate
            | IllegalAccessSpaceAggregate
            | BatchTaskError => ErrorClass::BusinessRejection,
            EventVersionConflict
            | DuplicateAggregateId
            | CommandExpectVersionConflict
            | SourcingVersionConflict => ErrorClass::Conflict,
            DuplicateRequestId => ErrorClass::Duplicate,
            TooManyRequests | BiDeploymentInspectionUnavailable => ErrorClass::Transient,
            RequestTimeout
            | InternalServerError
            | BiDeploymentInspectionInconsistent
            | BiDeploymentInspectionTimeout
            // A query's codes: on a command's answer they prove nothing.
            | QuerySchemaValidation
            | IllegalAccessQueryScope => ErrorClass::Unknown,
            Other(code) => classify_other(code, before_bus),
        })
    }
}

/// Codes outside the server's list: Spring status names and domain codes.
fn classify_other(code: &str, before_bus: bool) -> ErrorClass {
    match code {
        "ServiceUnavailable" | "BadGateway" | "GatewayTimeout" | "HttpStatus502"
        | "HttpStatus503" | "HttpStatus504" => ErrorClass::Unknown,
        "NotAcceptable" | "MethodNotAllowed" | "PayloadTooLarge" | "UnsupportedMediaType"
            if before_bus =>
        {
            ErrorClass::RejectedBeforeSend
        }
        _ => ErrorClass::BusinessRejection,
    }
}

impl ::core::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ErrorCode;
            fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str("an error code string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ErrorCode, E> {
                Ok(ErrorCode::parse(v))
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

impl super::json_codec::ToJson for ErrorCode {
    fn write_json(&self, out: &mut super::json_codec::JsonOut) {
        self.as_str().write_json(out);
    }
}

impl super::json_codec::FromJson for ErrorCode {
    fn from_json(
        value: super::json_value::JsonValue,
    ) -> Result<Self, super::json_codec::JsonError> {
        super::json_codec::read_name(&value).map(ErrorCode::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    #[test]
    fn every_known_code_round_trips_and_has_the_reference_status() {
        // 8.10.10's 23, and Wow 9's two query codes (QueryErrorCodes.kt).
        assert_eq!(ErrorCode::KNOWN.len(), 25);
        for code in ErrorCode::KNOWN {
            assert_eq!(&ErrorCode::parse(code.as_str()), code);
        }
        let status = |c: &str| ErrorCode::parse(c).http_status();
        assert_eq!(status("Ok"), 200);
        assert_eq!(status("DuplicateRequestId"), 400);
        assert_eq!(status("DuplicateAggregateId"), 400);
        assert_eq!(status("EventVersionConflict"), 409);
        assert_eq!(status("CommandExpectVersionConflict"), 409);
        assert_eq!(status("RequestTimeout"), 408);
        assert_eq!(status("TooManyRequests"), 429);
        assert_eq!(status("IllegalAccessDeletedAggregate"), 410);
        assert_eq!(status("IllegalAccessOwnerAggregate"), 403);
        assert_eq!(status("IllegalAccessSpaceAggregate"), 400);
        assert_eq!(status("InternalServerError"), 500);
        assert_eq!(status("BiDeploymentInspectionTimeout"), 504);
        assert_eq!(status("QuerySchemaValidation"), 400);
        assert_eq!(status("IllegalAccessQueryScope"), 403);
        assert_eq!(status("OrderPayDuplicated"), 400);
        assert_eq!(
            ErrorCode::parse("OrderPayDuplicated"),
            ErrorCode::Other("OrderPayDuplicated".into())
        );
    }

    #[test]
    fn classification_depends_on_the_stage() {
        use CommandStage::*;
        let class = |c: &str, s| ErrorCode::parse(c).classify(s);
        assert_eq!(class("Ok", Some(Processed)), None);
        assert_eq!(
            class("CommandValidation", Some(Sent)),
            Some(ErrorClass::RejectedBeforeSend)
        );
        assert_eq!(
            class("IllegalArgument", None),
            Some(ErrorClass::RejectedBeforeSend)
        );
        assert_eq!(
            class("IllegalArgument", Some(Processed)),
            Some(ErrorClass::BusinessRejection)
        );
        assert_eq!(
            class("IllegalState", Some(Processed)),
            Some(ErrorClass::BusinessRejection)
        );
        assert_eq!(
            class("OrderPayDuplicated", Some(Processed)),
            Some(ErrorClass::BusinessRejection)
        );
        assert_eq!(
            class("DuplicateRequestId", Some(Sent)),
            Some(ErrorClass::Duplicate)
        );
        assert_eq!(
            class("DuplicateAggregateId", Some(Processed)),
            Some(ErrorClass::Conflict)
        );
        assert_eq!(
            class("CommandExpectVersionConflict", Some(Processed)),
            Some(ErrorClass::Conflict)
        );
        assert_eq!(class("RequestTimeout", None), Some(ErrorClass::Unknown));
        assert_eq!(
            class("InternalServerError", None),
            Some(ErrorClass::Unknown)
        );
        assert_eq!(class("ServiceUnavailable", None), Some(ErrorClass::Unknown));
        assert_eq!(class("TooManyRequests", None), Some(ErrorClass::Transient));
    }

    #[test]
    fn serde_is_the_plain_string() {
        let code: ErrorCode = serde_json::from_str("\"Account-Entry-Failed\"").unwrap();
        assert_eq!(code.as_str(), "Account-Entry-Failed");
        assert_eq!(
            serde_json::to_string(&ErrorCode::DuplicateRequestId).unwrap(),
            "\"DuplicateRequestId\""
        );
        assert!(serde_json::from_str::<ErrorCode>("42").is_err());
    }
}

#[cfg(test)]
mod declared_in_typescript {
    //! The `.d.ts` unions of error codes (`src/js/types.rs`) say what the code sets.
    use crate::protocol::error_code::ErrorCode;

    const TYPES: &str = include_str!("../../../../src/js/types.rs");

    fn union(name: &str) -> Vec<String> {
        let start = TYPES
            .find(&format!("export type {name} ="))
            .expect("the type is declared");
        let decl = &TYPES[start..];
        let decl = &decl[..decl.find(';').unwrap()];
        decl.split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn wow_error_code_lists_every_code_the_server_defines() {
        let known: Vec<String> = ErrorCode::KNOWN
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect();
        assert_eq!(union("WowErrorCode"), known);
    }

    #[test]
    fn client_error_code_lists_the_codes_the_client_sets() {
        let declared = union("ClientErrorCode");
        let sources = [
            include_str!("../../../../src/js/client.rs"),
            include_str!("../machine/intent_machine.rs"),
            include_str!("../../../../src/js/support.js"),
        ];
        for source in sources {
            for code in source
                .split("failed_outcome(\n")
                .chain(source.split("ErrorCode::Other(\""))
                .chain(source.split("errorCode: \""))
                .skip(1)
                .filter_map(|s| s.split('"').next())
            {
                if !code.is_empty() && code.chars().all(|c| c.is_ascii_alphabetic()) {
                    assert!(
                        declared.iter().any(|d| d == code),
                        "{code} is missing from ClientErrorCode"
                    );
                }
            }
            for line in source.lines().filter(|l| l.contains("=> (\"")) {
                let code = line
                    .split("=> (\"")
                    .nth(1)
                    .and_then(|s| s.split('"').next())
                    .unwrap();
                assert!(
                    declared.iter().any(|d| d == code),
                    "{code} is missing from ClientErrorCode"
                );
            }
        }
    }
}
