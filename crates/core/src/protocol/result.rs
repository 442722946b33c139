//! `CommandResult`, `ErrorInfo` and their parts (PROTOCOL §2.1).

use serde::{Deserialize, Serialize};

use super::error_code::ErrorCode;
use super::json_codec::JsonError;
use super::json_codec::{wire_name, wire_object, wire_variant, FromJson, JsonOut, ToJson};
use super::json_value::JsonValue;
use super::stage::CommandStage;

/// The kind of function that produced a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FunctionKind {
    /// A command handler (and the gateway's `send`).
    #[default]
    Command,
    /// An event-sourcing function.
    Sourcing,
    /// An event handler, projector or saga.
    Event,
    /// A state-event handler (snapshots).
    StateEvent,
    /// No function: an error.
    Error,
    /// A kind this client does not know yet.
    #[serde(other)]
    Unknown,
}

wire_object! {
    /// The function that produced a stage's signal (the gateway, the aggregate, a projector, a saga).
    #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct FunctionInfo {
        /// The function's kind.
        function_kind: FunctionKind => "functionKind" put / req,
        /// Its bounded context.
        context_name: String => "contextName" put / req,
        /// Its processor, e.g. `Account`, `TransferSaga`, `CommandGateway`.
        processor_name: String => "processorName" put / req,
        /// Its name, e.g. `onCommand`, `onEvent`, `send`.
        name: String => "name" put / req,
    }
}

impl FunctionInfo {
    /// Builds a function info.
    pub fn new(kind: FunctionKind, context: &str, processor: &str, name: &str) -> FunctionInfo {
        FunctionInfo {
            function_kind: kind,
            context_name: context.to_owned(),
            processor_name: processor.to_owned(),
            name: name.to_owned(),
        }
    }
}

wire_object! {
    /// A field the gateway's validation refused, and why.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct BindingError {
        /// The field.
        name: String => "name" put / req,
        /// What is wrong with it.
        msg: String => "msg" put / req,
    }
}

// Failures carry the whole result, so nobody parses error text (DESIGN rule 7).
wire_object! {
    /// One stage's signal from the gateway, as Wow sends it; `succeeded` is false on a failed one.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CommandResult {
        /// Id of this signal (the SSE `id:`).
        id: String => "id" put / req,
        /// The command the wait was registered for (constant across saga chains).
        wait_command_id: String => "waitCommandId" put / req,
        /// The stage that produced it.
        stage: CommandStage => "stage" put / req,
        /// Bounded context of the aggregate the signal is about.
        context_name: String => "contextName" put / req,
        /// Aggregate name.
        aggregate_name: String => "aggregateName" put / req,
        /// Tenant, e.g. `(0)`.
        tenant_id: String => "tenantId" put / req,
        /// Aggregate id (a saga target's in chain mode).
        aggregate_id: String => "aggregateId" put / req,
        /// Version after processing; `null` for gateway-level failures.
        #[serde(default)]
        aggregate_version: Option<i64> => "aggregateVersion" put / opt,
        /// The original request's idempotency key.
        request_id: String => "requestId" put / req,
        /// The command this signal concerns.
        command_id: String => "commandId" put / req,
        /// The function that produced it.
        function: FunctionInfo => "function" put / req,
        /// `Ok` on success.
        #[serde(default)]
        error_code: ErrorCode => "errorCode" put / or_default,
        /// Human-readable message; not a contract.
        #[serde(default)]
        error_msg: String => "errorMsg" put / or_default_if_null,
        /// Field errors; omitted when empty.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        binding_errors: Vec<BindingError> => "bindingErrors" non_empty / or_default_if_null,
        /// Handler-set key/values, kept as received (`{}` when absent).
        #[serde(default = "JsonValue::empty_object")]
        result: JsonValue => "result" put / or_empty_object as "Record<string, unknown>",
        /// When the signal was produced (epoch ms).
        #[serde(default)]
        signal_time: i64 => "signalTime" put / or_default_if_null,
        /// The server's read-only `succeeded` flag, as received.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        succeeded: Option<bool> => "succeeded" some / opt,
    }
}

impl CommandResult {
    /// Whether this element reports success: its code is `Ok` and the server
    /// did not say `succeeded: false`. Both are checked, on every element.
    pub fn is_succeeded(&self) -> bool {
        self.error_code.is_ok() && self.succeeded != Some(false)
    }
}

wire_object! {
    /// A failure without a stage: a plain error body (a stream's error event, a
    /// timeout, a proxy's page), or an outcome's error.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ErrorInfo {
        /// The code.
        error_code: ErrorCode => "errorCode" put / req,
        /// Human-readable message.
        #[serde(default)]
        error_msg: String => "errorMsg" put / or_default_if_null,
        /// Field errors.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        binding_errors: Vec<BindingError> => "bindingErrors" non_empty / or_default_if_null,
        /// The server's `succeeded` flag, as received.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        succeeded: Option<bool> => "succeeded" some / opt,
    }
}

impl From<&CommandResult> for ErrorInfo {
    fn from(r: &CommandResult) -> ErrorInfo {
        ErrorInfo {
            error_code: r.error_code.clone(),
            error_msg: r.error_msg.clone(),
            binding_errors: r.binding_errors.clone(),
            succeeded: r.succeeded,
        }
    }
}

impl FunctionKind {
    const WIRE: [(FunctionKind, &'static str); 6] = [
        (FunctionKind::Command, "COMMAND"),
        (FunctionKind::Sourcing, "SOURCING"),
        (FunctionKind::Event, "EVENT"),
        (FunctionKind::StateEvent, "STATE_EVENT"),
        (FunctionKind::Error, "ERROR"),
        (FunctionKind::Unknown, "UNKNOWN"),
    ];
}

impl ToJson for FunctionKind {
    fn write_json(&self, out: &mut JsonOut) {
        wire_name(&FunctionKind::WIRE, self, out)
    }
}

impl FromJson for FunctionKind {
    /// A kind this client does not know is `Unknown` (`#[serde(other)]`).
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        Ok(wire_variant(&FunctionKind::WIRE, &value)?.unwrap_or(FunctionKind::Unknown))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    pub(crate) const SUCCESS: &str =
        include_str!("../../../../tests/fixtures/command_result_success.json");
    const FAILURE: &str = include_str!("../../../../tests/fixtures/command_result_duplicate.json");

    #[test]
    fn decodes_a_success_and_re_encodes_it_in_server_order() {
        let r: CommandResult = serde_json::from_str(SUCCESS).unwrap();
        assert_eq!(r.stage, CommandStage::Processed);
        assert_eq!(r.aggregate_version, Some(1));
        assert_eq!(r.request_id, "7f1d2c1e-0000-4000-8000-000000000001");
        assert_eq!(r.function.function_kind, FunctionKind::Command);
        assert_eq!(r.function.processor_name, "Account");
        assert!(r.is_succeeded());
        let compact: JsonValue = serde_json::from_str(SUCCESS).unwrap();
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            serde_json::to_string(&compact).unwrap()
        );
    }

    #[test]
    fn decodes_a_failure_with_null_version_and_keeps_unknown_fields_out() {
        let r: CommandResult = serde_json::from_str(FAILURE).unwrap();
        assert_eq!(r.error_code, ErrorCode::DuplicateRequestId);
        assert_eq!(r.stage, CommandStage::Sent);
        assert_eq!(r.aggregate_version, None);
        assert!(!r.is_succeeded());
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("\"aggregateVersion\":null"));
        assert!(!text.contains("bindingErrors"));
        assert!(!text.contains("futureField"));
    }

    #[test]
    fn succeeded_false_fails_an_element_even_with_an_ok_code() {
        let text = SUCCESS.replace("\"succeeded\": true", "\"succeeded\": false");
        let r: CommandResult = serde_json::from_str(&text).unwrap();
        assert!(r.error_code.is_ok());
        assert!(!r.is_succeeded());
    }

    #[test]
    fn missing_required_fields_and_wrong_types_are_typed_errors() {
        let no_stage = SUCCESS.replace("\"stage\": \"PROCESSED\",", "");
        let err = serde_json::from_str::<CommandResult>(&no_stage).unwrap_err();
        assert!(err.to_string().contains("missing field `stage`"), "{err}");
        let wrong = SUCCESS.replace("\"aggregateVersion\": 1", "\"aggregateVersion\": \"one\"");
        assert!(serde_json::from_str::<CommandResult>(&wrong).is_err());
        let truncated = &SUCCESS[..SUCCESS.len() / 2];
        assert!(serde_json::from_str::<CommandResult>(truncated).is_err());
    }

    #[test]
    fn the_hand_written_codec_matches_the_derives() {
        use crate::protocol::json_codec::assert_same_as_serde;
        let mut r: CommandResult = serde_json::from_str(SUCCESS).unwrap();
        assert_same_as_serde(&r);
        r.binding_errors = vec![BindingError {
            name: "a".into(),
            msg: "b".into(),
        }];
        r.succeeded = None;
        r.aggregate_version = None;
        r.function.function_kind = FunctionKind::Unknown;
        assert_same_as_serde(&r);
        assert_same_as_serde(&ErrorInfo::from(&r));
        let failure: CommandResult = serde_json::from_str(FAILURE).unwrap();
        assert_same_as_serde(&failure);
        let unknown_kind = JsonValue::String("NEW_KIND".into());
        assert_eq!(
            FunctionKind::from_json(unknown_kind).unwrap(),
            FunctionKind::Unknown
        );
    }

    #[test]
    fn decodes_binding_errors_and_a_result_map() {
        let text = SUCCESS
            .replace("\"result\": {}", "\"result\": {\"totalAmount\": 12.5}")
            .replace(
                "\"errorCode\": \"Ok\"",
                "\"errorCode\": \"CommandValidation\", \"bindingErrors\": [{\"name\": \"balance\", \"msg\": \"must be >= 0\"}]",
            );
        let r: CommandResult = serde_json::from_str(&text).unwrap();
        assert_eq!(r.binding_errors[0].name, "balance");
        assert_eq!(r.result.get("totalAmount"), Some(&JsonValue::Float(12.5)));
        assert!(!r.is_succeeded());
    }
}
