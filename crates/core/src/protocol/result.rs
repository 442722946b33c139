//! `CommandResult`, `ErrorInfo` and their parts (PROTOCOL §2.1).

use serde::{Deserialize, Serialize};

use super::error::ProtocolError;
use super::error_code::ErrorCode;
use super::json_codec::JsonError;
use super::json_codec::{
    wire_name, wire_object, wire_variant, FromJson, JsonOut, ObjectReader, ObjectWriter, ToJson,
};
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

/// The answer to a command at one stage. Failures carry the whole result so
/// nobody parses error text (DESIGN rule 7).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "RawBody")]
pub struct CommandResult {
    /// Id of this signal (the SSE `id:`).
    pub id: String,
    /// The command the wait was registered for (constant across saga chains).
    pub wait_command_id: String,
    /// The stage that produced it.
    pub stage: CommandStage,
    /// Bounded context of the aggregate the signal is about.
    pub context_name: String,
    /// Aggregate name.
    pub aggregate_name: String,
    /// Tenant, e.g. `(0)`.
    pub tenant_id: String,
    /// Aggregate id (a saga target's in chain mode).
    pub aggregate_id: String,
    /// Version after processing; `null` for gateway-level failures.
    pub aggregate_version: Option<i64>,
    /// The original request's idempotency key.
    pub request_id: String,
    /// The command this signal concerns.
    pub command_id: String,
    /// The function that produced it.
    pub function: FunctionInfo,
    /// `Ok` on success.
    pub error_code: ErrorCode,
    /// Human-readable message; not a contract.
    pub error_msg: String,
    /// Field errors; omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub binding_errors: Vec<BindingError>,
    /// Handler-set key/values, kept as received.
    pub result: JsonValue,
    /// When the signal was produced (epoch ms).
    pub signal_time: i64,
    /// The server's read-only `succeeded` flag, as received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub succeeded: Option<bool>,
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
        error_msg: String => "errorMsg" put / or_default,
        /// Field errors.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        binding_errors: Vec<BindingError> => "bindingErrors" non_empty / or_default,
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

/// Every field either body shape may carry, all optional: one decoding pass
/// tells a CommandResult from an ErrorInfo from something else.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct RawBody {
    id: Option<String>,
    wait_command_id: Option<String>,
    pub(crate) stage: Option<CommandStage>,
    context_name: Option<String>,
    aggregate_name: Option<String>,
    tenant_id: Option<String>,
    aggregate_id: Option<String>,
    aggregate_version: Option<i64>,
    request_id: Option<String>,
    command_id: Option<String>,
    function: Option<FunctionInfo>,
    pub(crate) error_code: Option<ErrorCode>,
    error_msg: Option<String>,
    binding_errors: Option<Vec<BindingError>>,
    result: Option<JsonValue>,
    signal_time: Option<i64>,
    succeeded: Option<bool>,
}

/// The first required field found missing; the others are taken as their
/// defaults meanwhile, so the conversion has one way out (as
/// [`ObjectReader`](super::ObjectReader) has) instead of one per field.
#[derive(Default)]
struct Required(Option<&'static str>);

impl Required {
    fn take<T: Default>(&mut self, field: Option<T>, name: &'static str) -> T {
        match field {
            Some(v) => v,
            None => {
                self.0.get_or_insert(name);
                T::default()
            }
        }
    }
}

impl TryFrom<RawBody> for CommandResult {
    type Error = ProtocolError;

    fn try_from(raw: RawBody) -> Result<CommandResult, ProtocolError> {
        let mut r = Required::default();
        let result = CommandResult {
            id: r.take(raw.id, "id"),
            wait_command_id: r.take(raw.wait_command_id, "waitCommandId"),
            stage: r.take(raw.stage, "stage"),
            context_name: r.take(raw.context_name, "contextName"),
            aggregate_name: r.take(raw.aggregate_name, "aggregateName"),
            tenant_id: r.take(raw.tenant_id, "tenantId"),
            aggregate_id: r.take(raw.aggregate_id, "aggregateId"),
            aggregate_version: raw.aggregate_version,
            request_id: r.take(raw.request_id, "requestId"),
            command_id: r.take(raw.command_id, "commandId"),
            function: r.take(raw.function, "function"),
            error_code: raw.error_code.unwrap_or_default(),
            error_msg: raw.error_msg.unwrap_or_default(),
            binding_errors: raw.binding_errors.unwrap_or_default(),
            result: raw.result.unwrap_or_else(JsonValue::empty_object),
            signal_time: raw.signal_time.unwrap_or_default(),
            succeeded: raw.succeeded,
        };
        match r.0 {
            None => Ok(result),
            Some(name) => Err(ProtocolError::json(
                "CommandResult",
                crate::text::text!("missing field `", name, "`"),
            )),
        }
    }
}

impl RawBody {
    /// An ErrorInfo, when the body has an `errorCode`.
    pub(crate) fn into_error_info(self) -> Option<ErrorInfo> {
        Some(ErrorInfo {
            error_code: self.error_code?,
            error_msg: self.error_msg.unwrap_or_default(),
            binding_errors: self.binding_errors.unwrap_or_default(),
            succeeded: self.succeeded,
        })
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

impl ToJson for CommandResult {
    fn write_json(&self, out: &mut JsonOut) {
        ObjectWriter::new(out)
            .put("id", &self.id)
            .put("waitCommandId", &self.wait_command_id)
            .put("stage", &self.stage)
            .put("contextName", &self.context_name)
            .put("aggregateName", &self.aggregate_name)
            .put("tenantId", &self.tenant_id)
            .put("aggregateId", &self.aggregate_id)
            .put("aggregateVersion", &self.aggregate_version)
            .put("requestId", &self.request_id)
            .put("commandId", &self.command_id)
            .put("function", &self.function)
            .put("errorCode", &self.error_code)
            .put("errorMsg", &self.error_msg)
            .non_empty("bindingErrors", &self.binding_errors)
            .put("result", &self.result)
            .put("signalTime", &self.signal_time)
            .some("succeeded", &self.succeeded)
            .done()
    }
}

impl FromJson for CommandResult {
    /// Through `RawBody`, as the derive is (`try_from = "RawBody"`).
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        CommandResult::try_from(RawBody::from_json(value)?).map_err(|_| JsonError {
            what: "a CommandResult without a required field",
            field: None,
        })
    }
}

impl FromJson for RawBody {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        let mut o = ObjectReader::of(value)?;
        let read = RawBody {
            id: o.opt("id"),
            wait_command_id: o.opt("waitCommandId"),
            stage: o.opt("stage"),
            context_name: o.opt("contextName"),
            aggregate_name: o.opt("aggregateName"),
            tenant_id: o.opt("tenantId"),
            aggregate_id: o.opt("aggregateId"),
            aggregate_version: o.opt("aggregateVersion"),
            request_id: o.opt("requestId"),
            command_id: o.opt("commandId"),
            function: o.opt("function"),
            error_code: o.opt("errorCode"),
            error_msg: o.opt("errorMsg"),
            binding_errors: o.opt("bindingErrors"),
            result: o.opt("result"),
            signal_time: o.opt("signalTime"),
            succeeded: o.opt("succeeded"),
        };
        o.finish(read)
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
