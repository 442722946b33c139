//! Request headers the gateway reads (PROTOCOL §1.6), validated before use.

use super::stage::CommandStage;

/// Whether a response's `Content-Type` says a stage stream (SSE).
#[inline]
pub fn is_event_stream(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|t| t.starts_with("text/event-stream"))
}

/// `Retry-After`'s delay in milliseconds: its seconds form (an HTTP date
/// is not read: the backoff decides instead).
#[inline]
pub fn retry_after_ms(value: Option<&str>) -> Option<u64> {
    crate::text::parse_decimal(value?.trim()).map(|s| s.saturating_mul(1000))
}

/// The `Command-Header-<key>` keys Wow 9 reserves
/// (`ReservedCommandHeaderKeys`, webflux): the framework writes them
/// itself (operator, local-first, trace and upstream, user agent, remote
/// IP, W3C trace context, CoSec's app and device), so a request setting
/// one is refused (400 `IllegalArgument`) and nothing of it copied. Lower
/// case; Wow compares keys case-insensitively. Wow 8.10 copied them.
pub(crate) const RESERVED_COMMAND_HEADER_KEYS: [&str; 12] = [
    "command_operator",
    "local_first",
    "trace_id",
    "upstream_id",
    "upstream_name",
    "user_agent",
    "remote_ip",
    "traceparent",
    "tracestate",
    "baggage",
    "app_id",
    "device_id",
];

/// Key prefixes Wow 9 reserves likewise: every wait key and every
/// compensation key.
pub(crate) const RESERVED_COMMAND_HEADER_PREFIXES: [&str; 2] = ["command_wait_", "compensate."];

/// The key of header `name` when it is a `Command-Header-<key>` (prefix
/// in any case) whose key Wow 9 reserves.
pub(crate) fn reserved_command_header(name: &str) -> Option<&str> {
    let at = names::HEADER_PREFIX.len();
    if !name.get(..at)?.eq_ignore_ascii_case(names::HEADER_PREFIX) {
        return None;
    }
    let key = &name[at..];
    let lower = key.to_ascii_lowercase();
    let reserved = RESERVED_COMMAND_HEADER_KEYS.contains(&lower.as_str())
        || RESERVED_COMMAND_HEADER_PREFIXES
            .iter()
            .any(|p| lower.starts_with(p));
    reserved.then_some(key)
}

/// Header names, exactly as the server spells them.
pub mod names {
    /// Stage to wait for (default PROCESSED).
    pub const WAIT_STAGE: &str = "Command-Wait-Stage";
    /// Bounded-context filter for the waited function.
    pub const WAIT_CONTEXT: &str = "Command-Wait-Context";
    /// Processor filter (PROJECTED, EVENT_HANDLED, SAGA_HANDLED).
    pub const WAIT_PROCESSOR: &str = "Command-Wait-Processor";
    /// Function filter.
    pub const WAIT_FUNCTION: &str = "Command-Wait-Function";
    /// Wait deadline in milliseconds (default 30000).
    pub const WAIT_TIMEOUT: &str = "Command-Wait-Timeout";
    /// Legacy misspelt alias read by servers before 8.4.
    pub const LEGACY_WAIT_TIMEOUT: &str = "Command-Wait-Timout";
    /// Chain wait: tail stage (only with `SAGA_HANDLED`).
    pub const WAIT_TAIL_STAGE: &str = "Command-Wait-Tail-Stage";
    /// Chain wait: tail context.
    pub const WAIT_TAIL_CONTEXT: &str = "Command-Wait-Tail-Context";
    /// Chain wait: tail processor.
    pub const WAIT_TAIL_PROCESSOR: &str = "Command-Wait-Tail-Processor";
    /// Chain wait: tail function.
    pub const WAIT_TAIL_FUNCTION: &str = "Command-Wait-Tail-Function";
    /// The idempotency key.
    pub const REQUEST_ID: &str = "Command-Request-Id";
    /// Target aggregate id.
    pub const AGGREGATE_ID: &str = "Command-Aggregate-Id";
    /// Expected current aggregate version.
    pub const AGGREGATE_VERSION: &str = "Command-Aggregate-Version";
    /// Tenant id.
    pub const TENANT_ID: &str = "Command-Tenant-Id";
    /// Owner id.
    pub const OWNER_ID: &str = "Command-Owner-Id";
    /// Space id (`Wow-Space-Id`, not `Command-Space-Id`).
    pub const SPACE_ID: &str = "Wow-Space-Id";
    /// LocalFirst bus mode.
    pub const LOCAL_FIRST: &str = "Command-Local-First";
    /// Prefix of custom message headers.
    pub(crate) const HEADER_PREFIX: &str = "Command-Header-";
    /// Response header carrying the error code in JSON mode.
    pub const ERROR_CODE: &str = "Wow-Error-Code";
    /// Content negotiation.
    pub const ACCEPT: &str = "Accept";
    /// Body type.
    pub const CONTENT_TYPE: &str = "Content-Type";
}

/// Why a header was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderError {
    /// The header name (or the offending custom key).
    pub name: String,
    /// What is wrong.
    pub reason: HeaderErrorReason,
}

/// The ways a header can be wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderErrorReason {
    /// The value holds CR, LF, another control character or a non-ASCII byte.
    InvalidValueChar,
    /// The value is empty where a value is required.
    Empty,
    /// The name is not an HTTP token.
    InvalidName,
    /// The wait timeout must be greater than zero.
    NonPositiveTimeout,
    /// A tail stage needs `SAGA_HANDLED` as the main stage.
    TailWithoutSagaHandled,
    /// A `Command-Header-<key>` whose key Wow 9 reserves (a record an
    /// earlier build wrote: a command given now is refused before).
    Reserved,
}

impl HeaderError {
    /// The message (what `Display` writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        let why = match self.reason {
            HeaderErrorReason::InvalidValueChar => {
                "value holds CR, LF, a control character or non-ASCII text"
            }
            HeaderErrorReason::Empty => "value is empty",
            HeaderErrorReason::InvalidName => "name is not an HTTP token",
            HeaderErrorReason::NonPositiveTimeout => "wait timeout must be greater than zero",
            HeaderErrorReason::TailWithoutSagaHandled => {
                "a wait tail stage needs SAGA_HANDLED as the wait stage"
            }
            HeaderErrorReason::Reserved => {
                "Wow reserves its key (refused with 400 IllegalArgument); nothing was sent"
            }
        };
        crate::text::text!("header `", self.name, "`: ", why)
    }
}

impl ::core::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for HeaderError {}

fn refuse(name: &str, reason: HeaderErrorReason) -> HeaderError {
    HeaderError {
        name: name.to_owned(),
        reason,
    }
}

/// A header value that is safe to put on the wire: visible ASCII, spaces and
/// tabs inside, no CR/LF (no header injection), not empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeaderValue(String);

impl HeaderValue {
    /// Validates `value` for header `name`.
    pub fn new(name: &str, value: &str) -> Result<HeaderValue, HeaderError> {
        if value.trim_matches([' ', '\t']).is_empty() {
            return Err(refuse(name, HeaderErrorReason::Empty));
        }
        if !value
            .bytes()
            .all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
        {
            return Err(refuse(name, HeaderErrorReason::InvalidValueChar));
        }
        Ok(HeaderValue(value.to_owned()))
    }

    /// The value.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether `name` is an RFC 9110 token.
pub(crate) fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The tail of a chain wait (PROTOCOL §3.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitTail {
    /// Stage the saga-produced commands must reach.
    pub stage: CommandStage,
    /// Context filter.
    pub context: Option<String>,
    /// Processor filter.
    pub processor: Option<String>,
    /// Function filter.
    pub function: Option<String>,
}

/// What the gateway should wait for before answering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitPlan {
    /// Target stage.
    pub stage: CommandStage,
    /// Context filter.
    pub context: Option<String>,
    /// Processor filter.
    pub processor: Option<String>,
    /// Function filter.
    pub function: Option<String>,
    /// Chain tail; only with `SAGA_HANDLED`.
    pub tail: Option<WaitTail>,
    /// Server-side wait deadline in ms.
    pub timeout_ms: u64,
}

impl Default for WaitPlan {
    fn default() -> Self {
        WaitPlan {
            stage: CommandStage::Processed,
            context: None,
            processor: None,
            function: None,
            tail: None,
            timeout_ms: 30_000,
        }
    }
}

/// The `Command-*` headers of one attempt, validated, in a stable order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CommandHeaders {
    entries: Vec<(String, HeaderValue)>,
}

impl CommandHeaders {
    /// No headers yet.
    pub fn new() -> CommandHeaders {
        CommandHeaders::default()
    }

    /// Adds a validated header.
    pub fn set(&mut self, name: &str, value: &str) -> Result<&mut Self, HeaderError> {
        if !is_token(name) {
            return Err(refuse(name, HeaderErrorReason::InvalidName));
        }
        if reserved_command_header(name).is_some() {
            return Err(refuse(name, HeaderErrorReason::Reserved));
        }
        let value = HeaderValue::new(name, value)?;
        match self
            .entries
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some(entry) => entry.1 = value,
            None => self.entries.push((name.to_owned(), value)),
        }
        Ok(self)
    }

    fn set_opt(&mut self, name: &str, value: Option<&str>) -> Result<&mut Self, HeaderError> {
        match value {
            Some(v) => self.set(name, v),
            None => Ok(self),
        }
    }

    /// The wait plan's headers. `legacy_timeout` also sends `Command-Wait-Timout`
    /// for servers before 8.4.
    pub(crate) fn wait_plan(
        &mut self,
        plan: &WaitPlan,
        legacy_timeout: bool,
    ) -> Result<&mut Self, HeaderError> {
        if plan.timeout_ms == 0 {
            return Err(refuse(
                names::WAIT_TIMEOUT,
                HeaderErrorReason::NonPositiveTimeout,
            ));
        }
        self.set(names::WAIT_STAGE, plan.stage.as_str())?;
        self.set_opt(names::WAIT_CONTEXT, plan.context.as_deref())?;
        self.set_opt(names::WAIT_PROCESSOR, plan.processor.as_deref())?;
        self.set_opt(names::WAIT_FUNCTION, plan.function.as_deref())?;
        let timeout = crate::text::decimal(plan.timeout_ms);
        self.set(names::WAIT_TIMEOUT, &timeout)?;
        if legacy_timeout {
            self.set(names::LEGACY_WAIT_TIMEOUT, &timeout)?;
        }
        if let Some(tail) = &plan.tail {
            if plan.stage != CommandStage::SagaHandled {
                return Err(refuse(
                    names::WAIT_TAIL_STAGE,
                    HeaderErrorReason::TailWithoutSagaHandled,
                ));
            }
            self.set(names::WAIT_TAIL_STAGE, tail.stage.as_str())?;
            self.set_opt(names::WAIT_TAIL_CONTEXT, tail.context.as_deref())?;
            self.set_opt(names::WAIT_TAIL_PROCESSOR, tail.processor.as_deref())?;
            self.set_opt(names::WAIT_TAIL_FUNCTION, tail.function.as_deref())?;
        }
        Ok(self)
    }

    /// A custom message header, sent as `Command-Header-<key>`; a key Wow
    /// 9 reserves is refused ([`reserved_command_header`]).
    #[cfg(test)]
    pub(crate) fn custom(&mut self, key: &str, value: &str) -> Result<&mut Self, HeaderError> {
        if !is_token(key) {
            return Err(refuse(key, HeaderErrorReason::InvalidName));
        }
        self.set(&crate::text::text!(names::HEADER_PREFIX, key), value)
    }

    /// The value of a header, looked up case-insensitively.
    #[cfg(test)]
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// All headers, in the order they were set.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

/// A W3C `traceparent` for one attempt of the intent whose requestId is
/// `request_id` (a UUID: its 32 hex digits are the trace id, so every
/// attempt and every client that sends it joins one trace) with a new
/// random span id; `None` when the requestId is not 32 hex digits.
pub fn traceparent(request_id: &str, span: u64) -> Option<String> {
    let trace: String = request_id.chars().filter(|c| *c != '-').collect();
    if trace.len() != 32 || !trace.bytes().all(|b| b.is_ascii_hexdigit()) || span == 0 {
        return None;
    }
    let mut out = String::with_capacity(55);
    out.push_str("00-");
    out.push_str(&trace.to_ascii_lowercase());
    out.push('-');
    crate::text::push_hex(&mut out, span, 16, false);
    out.push_str("-01");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    #[test]
    fn reads_content_type_and_retry_after() {
        assert!(is_event_stream(Some("text/event-stream;charset=UTF-8")));
        assert!(!is_event_stream(Some("application/json")));
        assert!(!is_event_stream(None));
        assert_eq!(retry_after_ms(Some(" 3 ")), Some(3000));
        assert_eq!(retry_after_ms(Some("Wed, 21 Oct 2015 07:28:00 GMT")), None);
        assert_eq!(retry_after_ms(None), None);
    }

    #[test]
    fn refuses_injection_controls_and_non_ascii() {
        for bad in [
            "a\r\nX-Evil: 1",
            "a\nb",
            "a\rb",
            "nul\0",
            "caf\u{e9}",
            "\u{7f}",
            "  ",
        ] {
            assert!(HeaderValue::new(names::REQUEST_ID, bad).is_err(), "{bad:?}");
        }
        let err = HeaderValue::new(names::REQUEST_ID, "x\r\n").unwrap_err();
        assert_eq!(err.reason, HeaderErrorReason::InvalidValueChar);
        assert_eq!(err.name, "Command-Request-Id");
        assert!(err.to_string().contains("Command-Request-Id"));
        assert!(HeaderValue::new("x", "Bearer abc.def\tghi").is_ok());
        let mut h = CommandHeaders::new();
        assert_eq!(
            h.set("Bad Name", "v").unwrap_err().reason,
            HeaderErrorReason::InvalidName
        );
        assert!(h.custom("tenant:x", "v").is_err());
        assert!(h.custom("Trace_Id", "v").is_err() && h.custom("command_wait_x", "v").is_err());
    }

    #[test]
    fn wait_plan_headers_include_tail_and_legacy_alias_when_asked() {
        let plan = WaitPlan {
            stage: CommandStage::SagaHandled,
            processor: Some("TransferSaga".into()),
            tail: Some(WaitTail {
                stage: CommandStage::Snapshot,
                context: None,
                processor: None,
                function: None,
            }),
            timeout_ms: 5000,
            ..WaitPlan::default()
        };
        let mut h = CommandHeaders::new();
        h.wait_plan(&plan, true).unwrap();
        let got: Vec<(&str, &str)> = h.iter().collect();
        assert_eq!(
            got,
            [
                ("Command-Wait-Stage", "SAGA_HANDLED"),
                ("Command-Wait-Processor", "TransferSaga"),
                ("Command-Wait-Timeout", "5000"),
                ("Command-Wait-Timout", "5000"),
                ("Command-Wait-Tail-Stage", "SNAPSHOT"),
            ]
        );
        let mut plain = CommandHeaders::new();
        plain.wait_plan(&WaitPlan::default(), false).unwrap();
        assert_eq!(plain.get("command-wait-timeout"), Some("30000"));
        assert_eq!(plain.get(names::LEGACY_WAIT_TIMEOUT), None);
    }

    #[test]
    fn wait_plan_errors_are_typed() {
        let zero = WaitPlan {
            timeout_ms: 0,
            ..WaitPlan::default()
        };
        let err = CommandHeaders::new().wait_plan(&zero, false).unwrap_err();
        assert_eq!(err.reason, HeaderErrorReason::NonPositiveTimeout);
        let tail_alone = WaitPlan {
            tail: Some(WaitTail {
                stage: CommandStage::Processed,
                context: None,
                processor: None,
                function: None,
            }),
            ..WaitPlan::default()
        };
        let err = CommandHeaders::new()
            .wait_plan(&tail_alone, false)
            .unwrap_err();
        assert_eq!(err.reason, HeaderErrorReason::TailWithoutSagaHandled);
    }

    #[test]
    fn custom_headers_get_the_prefix_and_set_replaces() {
        let mut h = CommandHeaders::new();
        h.custom("trace", "abc").unwrap();
        h.set(names::REQUEST_ID, "r1").unwrap();
        h.set("command-request-id", "r2").unwrap();
        assert_eq!(h.get("Command-Header-trace"), Some("abc"));
        assert_eq!(h.iter().count(), 2);
        assert_eq!(h.get(names::REQUEST_ID), Some("r2"));
        assert_eq!(names::SPACE_ID, "Wow-Space-Id");
    }

    #[test]
    fn a_traceparent_is_the_request_ids_trace_and_the_attempts_span() {
        assert_eq!(
            traceparent(
                "0192f5c1-3e4b-7c2d-9a8b-1234567890AB",
                0x00f0_0000_0000_0abc
            )
            .as_deref(),
            Some("00-0192f5c13e4b7c2d9a8b1234567890ab-00f0000000000abc-01")
        );
        assert_eq!(traceparent("not-a-uuid", 1), None);
        assert_eq!(
            traceparent("0192f5c1-3e4b-7c2d-9a8b-1234567890ab", 0),
            None,
            "a zero span is invalid"
        );
    }
}
