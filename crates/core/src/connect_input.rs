//! What `WowClient.connect`'s options say, read field by field with the
//! same errors as a command's ([`CallerFields`]). The functions and the
//! storage are kept as the caller's values (`V`), for the binding layer.

use crate::caller_fields::{CallerFields, Given};
use crate::engine::{ConfirmWith, EngineConfig};
use crate::intent_input::{stage, Defaults};
use crate::journal::RequestIdPolicy;
use crate::machine::MachineConfig;
use crate::protocol::{json_value::MAX_NESTING, CommandStage, JsonLimits, QueryShape};
use crate::text::text;

/// How long `headers`, `confirm` and a storage adapter's operations may
/// take by default.
pub const DEFAULT_CALLBACK_TIMEOUT_MS: u32 = 10_000;
/// The largest answer read by default (a command's, a query's, a stage
/// stream's in all): far past any Wow answer (a batched look's list of
/// 1,000 streams' ids is about 200 KB), short of what would exhaust a tab.
pub(crate) const DEFAULT_MAX_ANSWER_BYTES: u32 = 8 << 20;
/// The longest delay a browser's timer keeps (2^31 - 1 ms): a longer
/// callback timeout would fire at once.
const MAX_TIMER_MS: u32 = 2_147_483_647;

/// What the options decide: the engine's settings, the defaults every
/// command starts from, and how long a caller's callback may take.
pub struct Settings {
    /// The engine's.
    pub engine: EngineConfig,
    /// Each command's.
    pub defaults: Defaults,
    /// A callback's time (`callbackTimeoutMs`).
    pub within_ms: u32,
}

/// Retry settings as given.
#[derive(Clone, Copy, Debug, Default)]
pub struct RetryInput {
    /// Attempts per drive.
    pub max_attempts: Option<u32>,
    /// Backoff base.
    pub base_ms: Option<u64>,
    /// Backoff cap.
    pub max_ms: Option<u64>,
    /// Confirmation queries before escalating.
    pub max_confirms: Option<u32>,
}

/// `WowClient.connect` options; `V` is a caller's value (an adapter), and
/// its functions `V::Function`.
pub struct ConnectInput<V: Given> {
    /// The gateway's base URL.
    pub base_url: String,
    /// Who is signed in (`None`: an app without sign-in); required.
    pub user: Option<String>,
    /// Header names a command's own `headers` may not carry, besides the credentials.
    pub secret_headers: String,
    /// The largest answer read, in bytes.
    pub max_answer_bytes: Option<u64>,
    /// The gateway's Wow version (`"9.1.3"`): which query shape it reads.
    pub wow: Option<String>,
    /// Storage namespace (user / tenant).
    pub namespace: Option<String>,
    /// Caller timeout per attempt.
    pub timeout_ms: Option<u64>,
    /// Default wait stage.
    pub wait_stage: Option<String>,
    /// Server-side wait timeout (`Command-Wait-Timeout`).
    pub wait_timeout_ms: Option<u64>,
    /// Retry settings.
    pub retry: Option<RetryInput>,
    /// Also send `Command-Wait-Timout`.
    pub legacy_wait_timeout: Option<bool>,
    /// `"v7"` (default) or `"v4"`.
    pub request_id: Option<String>,
    /// Settled intents are kept this many days (default 7).
    pub retention_days: Option<f64>,
    /// Resume unresolved intents right after connecting (needs Web Locks).
    pub resume: Option<bool>,
    /// Ask the browser to keep storage under pressure.
    pub persist_storage: Option<bool>,
    /// Send a W3C `traceparent` with each attempt.
    pub trace_context: Option<bool>,
    /// How long `headers`, `confirm` and a storage adapter's operations may take.
    pub callback_timeout_ms: Option<u64>,
    /// The longest command body, as JSON text.
    pub max_body_chars: Option<u64>,
    /// The deepest nesting in a command body.
    pub max_body_depth: Option<u64>,
    /// `"return"`: a call that meets an offline runtime settles at once.
    pub offline_return: bool,
    /// Where intents are kept: a storage name, a caller's adapter, or none (the default).
    pub storage: V,
    /// The caller's functions.
    pub functions: CallerFunctions<V::Function>,
}

/// The functions among `connect`'s options: whether each is given is part
/// of the engine's config ([`ConnectInput::settings`]), and the executor
/// calls them.
#[derive(Default)]
pub struct CallerFunctions<F> {
    /// `() → headers`: headers for each attempt, asked for before it is sent.
    pub headers: Option<F>,
    /// `(question) → {appended, version?, commandId?}`: a caller's own
    /// source of history, asked before the gateway's.
    pub confirm: Option<F>,
    /// `(questions) → [{aggregateId, requestId, appended, …}]`: the same,
    /// asked about many intents at once.
    pub confirm_batch: Option<F>,
    /// `(outcome) → void`: told once when an intent escalates.
    pub on_escalated: Option<F>,
    /// `(question) → boolean`: a caller's check of downstream stages.
    pub check_downstream: Option<F>,
    /// `(event) → void`: telemetry events.
    pub on_event: Option<F>,
    /// `(event) → void`: the history probe's events.
    pub on_history: Option<F>,
}

impl<V: Given> ConnectInput<V> {
    /// Reads `WowClient.connect`'s options.
    pub fn read(options: V) -> Result<ConnectInput<V>, String> {
        let o = CallerFields::of("options", options)?;
        let base_url = o.string("baseUrl");
        if base_url.is_none() {
            o.refuse("options.baseUrl is required".into());
        }
        // Who is signed in is never guessed: `null` says "nobody, ever".
        if !o.given("user") {
            o.refuse(
                "options.user is required: the signed-in user's id, or null for an app without sign-in"
                    .into(),
            );
        }
        let read = ConnectInput {
            base_url: base_url.unwrap_or_default(),
            user: o.string("user"),
            secret_headers: o.strings("secretHeaders").unwrap_or_default(),
            max_answer_bytes: o.count("maxAnswerBytes"),
            wow: o.string("wow"),
            namespace: o.string("namespace"),
            timeout_ms: o.count("timeoutMs"),
            wait_stage: o.string("waitStage"),
            wait_timeout_ms: o.count("waitTimeoutMs"),
            retry: o.object("retry").map(|r| {
                let retry = RetryInput {
                    max_attempts: r.count("maxAttempts").map(clamp_u32),
                    base_ms: r.count("baseMs"),
                    max_ms: r.count("maxMs"),
                    max_confirms: r.count("maxConfirms").map(clamp_u32),
                };
                r.known();
                retry
            }),
            legacy_wait_timeout: o.boolean("legacyWaitTimeout"),
            request_id: o.string("requestId"),
            retention_days: o.number("retentionDays"),
            resume: o.boolean("resume"),
            persist_storage: o.boolean("persistStorage"),
            trace_context: o.boolean("traceContext"),
            callback_timeout_ms: o.count("callbackTimeoutMs"),
            max_body_chars: o.count("maxBodyChars"),
            max_body_depth: o.count("maxBodyDepth"),
            offline_return: match o.string("offline").as_deref() {
                None | Some("wait") => false,
                Some("return") => true,
                Some(_) => {
                    o.refuse("options.offline must be \"wait\" or \"return\"".into());
                    false
                }
            },
            storage: o.any("storage"),
            functions: CallerFunctions {
                headers: o.function("headers"),
                confirm: o.function("confirm"),
                confirm_batch: o.function("confirmBatch"),
                on_escalated: o.function("onEscalated"),
                check_downstream: o.function("checkDownstream"),
                on_event: o.function("onEvent"),
                on_history: o.function("onHistory"),
            },
        };
        // Read where the module restarts (src/web/instance.js): checked here.
        let _ = o.function("onRestart");
        o.known();
        o.finish(read)
    }
}

impl<V: Given> ConnectInput<V> {
    /// The settings these options decide, or the first option that is
    /// wrong (checked in this order: `baseUrl`, `requestId`, `wow`, `waitStage`).
    pub fn settings(&self) -> Result<Settings, String> {
        crate::protocol::check_base_url(&self.base_url)?;
        let policy = match self.request_id.as_deref() {
            None | Some("v7") => RequestIdPolicy::RandomV7,
            Some("v4") => RequestIdPolicy::RandomV4,
            Some(other) => return Err(text!("requestId `", other, "`: use 'v7' or 'v4'")),
        };
        // Stated, never learned from a query's answer (QueryShape).
        let query_shape = match self.wow.as_deref() {
            None => QueryShape::Condition,
            Some(v) => QueryShape::of_version(v).ok_or(
                "options.wow is the gateway's Wow version, such as \"9.1.3\" or \"8.10.10\"",
            )?,
        };
        let wait_stage = match &self.wait_stage {
            Some(s) => stage(s)?,
            None => CommandStage::Processed,
        };
        let base = MachineConfig::default();
        let retry = self.retry.unwrap_or_default();
        let machine = MachineConfig {
            caller_timeout_ms: self.timeout_ms.unwrap_or(base.caller_timeout_ms),
            max_attempts: retry.max_attempts.unwrap_or(base.max_attempts).max(1),
            retry_base_ms: retry.base_ms.unwrap_or(base.retry_base_ms),
            retry_max_ms: retry.max_ms.unwrap_or(base.retry_max_ms),
            max_confirms: retry.max_confirms.unwrap_or(base.max_confirms).max(1),
            ..base
        };
        let f = &self.functions;
        let limits = JsonLimits::default();
        let limit = |v: Option<u64>, d: u32| v.map_or(d, clamp_u32);
        Ok(Settings {
            engine: EngineConfig {
                namespace: self.namespace.clone().unwrap_or_else(|| "default".into()),
                user: self.user.clone(),
                base_url: self.base_url.trim_end_matches('/').to_owned(),
                secret_headers: self.secret_headers.clone(),
                max_answer_bytes: self
                    .max_answer_bytes
                    .map_or(DEFAULT_MAX_ANSWER_BYTES, |n| clamp_u32(n).max(1)),
                machine: machine.clone(),
                legacy_timeout: self.legacy_wait_timeout.unwrap_or(false),
                headers: f.headers.is_some(),
                // One probe per namespace and source of history: a confirmer
                // that takes one question at a time is asked one at a time.
                confirm: match (&f.confirm_batch, &f.confirm) {
                    (Some(_), _) => ConfirmWith::Batch,
                    (None, Some(_)) => ConfirmWith::One,
                    (None, None) => ConfirmWith::Gateway,
                },
                offline_return: self.offline_return,
                on_event: f.on_event.is_some(),
                on_history: f.on_history.is_some(),
                on_escalated: f.on_escalated.is_some(),
                check_downstream: f.check_downstream.is_some(),
                trace_context: self.trace_context == Some(true),
                policy,
                retention_ms: (self.retention_days.unwrap_or(7.0) * 86_400_000.0) as i64,
                query_shape,
            },
            defaults: Defaults {
                config: machine,
                wait_stage,
                wait_timeout_ms: self.wait_timeout_ms,
                policy,
                body_limits: JsonLimits {
                    max_chars: limit(self.max_body_chars, limits.max_chars),
                    // Beyond what a JsonValue is read with, a body could not be kept.
                    max_depth: limit(self.max_body_depth, limits.max_depth).min(MAX_NESTING),
                },
            },
            within_ms: self
                .callback_timeout_ms
                .map_or(DEFAULT_CALLBACK_TIMEOUT_MS, |ms| {
                    clamp_u32(ms).min(MAX_TIMER_MS)
                }),
        })
    }
}

fn clamp_u32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caller_fields::tests::given;

    fn refused(options: &str) -> String {
        match ConnectInput::read(given(options)) {
            Ok(_) => panic!("{options} was read"),
            Err(e) => e,
        }
    }

    #[test]
    fn reads_the_options_and_refuses_the_first_bad_one() {
        let read = ConnectInput::read(given(
            r#"{"baseUrl":"http://x","user":"alice","retry":{"maxAttempts":9e9},"offline":"return","onEvent":"fn"}"#,
        ))
        .unwrap();
        assert_eq!(read.base_url, "http://x");
        assert_eq!(read.user.as_deref(), Some("alice"));
        assert_eq!(read.retry.unwrap().max_attempts, Some(u32::MAX));
        assert!(
            read.offline_return
                && read.functions.on_event.is_some()
                && matches!(read.storage, crate::caller_fields::tests::Fake::Nothing)
        );
        assert_eq!(
            refused(r#"{"offline":"later","onEvent":3}"#),
            "options.baseUrl is required"
        );
        // Who is signed in is never guessed: left out, it is refused; null is an app without sign-in.
        assert_eq!(
            refused(r#"{"baseUrl":"u"}"#),
            "options.user is required: the signed-in user's id, or null for an app without sign-in"
        );
        assert_eq!(
            refused(r#"{"baseUrl":"u","user":7}"#),
            "options.user must be a string"
        );
        assert_eq!(
            refused(r#"{"baseUrl":"u","user":null,"secretHeaders":"X-Key"}"#),
            "options.secretHeaders must be an array of strings"
        );
        assert_eq!(
            refused(r#"{"baseUrl":"u","user":null,"offline":"later","onEvent":3}"#),
            "options.offline must be \"wait\" or \"return\""
        );
        assert_eq!(
            refused(r#"{"baseUrl":"u","user":null,"retry":{"tries":1}}"#),
            "options.retry.tries is not an option (known: maxAttempts, baseMs, maxMs, maxConfirms)"
        );
    }

    fn settings(options: &str) -> Result<Settings, String> {
        ConnectInput::read(given(options))?.settings()
    }

    #[test]
    fn the_options_decide_the_settings() {
        let d =
            settings(r#"{"baseUrl":"https://gw/","user":null}"#).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.engine.namespace, "default");
        assert_eq!(d.engine.base_url, "https://gw");
        assert_eq!(d.engine.retention_ms, 7 * 86_400_000);
        assert!(matches!(d.engine.confirm, ConfirmWith::Gateway));
        assert_eq!(d.defaults.wait_stage, CommandStage::Processed);
        assert_eq!(d.defaults.policy, RequestIdPolicy::RandomV7);
        assert_eq!(d.defaults.body_limits, JsonLimits::default());
        assert_eq!(d.within_ms, DEFAULT_CALLBACK_TIMEOUT_MS);
        let s = settings(
            r#"{"baseUrl":"http://gw","user":"u-1","namespace":"n","secretHeaders":["X-Api-Key"],"maxAnswerBytes":0,"requestId":"v4","waitStage":"SENT",
                "retry":{"maxAttempts":0,"maxConfirms":0,"baseMs":5},"confirm":"fn","confirmBatch":"fn",
                "callbackTimeoutMs":9007199254740991,"maxBodyDepth":100000,"maxBodyChars":10,
                "retentionDays":0.5}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.engine.namespace, "n");
        assert_eq!(s.engine.user.as_deref(), Some("u-1"));
        assert_eq!(s.engine.secret_headers, "X-Api-Key");
        assert_eq!(s.engine.max_answer_bytes, 1, "at least one byte");
        assert_eq!(d.engine.user, None);
        assert_eq!(d.engine.max_answer_bytes, DEFAULT_MAX_ANSWER_BYTES);
        assert_eq!(s.defaults.policy, RequestIdPolicy::RandomV4);
        assert_eq!(s.defaults.wait_stage, CommandStage::Sent);
        // At least one attempt and one confirmation, whatever is asked.
        assert_eq!(
            (s.engine.machine.max_attempts, s.engine.machine.max_confirms),
            (1, 1)
        );
        assert_eq!(s.defaults.config.retry_base_ms, 5);
        assert!(matches!(s.engine.confirm, ConfirmWith::Batch));
        assert_eq!(s.within_ms, MAX_TIMER_MS);
        assert_eq!(s.defaults.body_limits.max_chars, 10);
        assert_eq!(s.defaults.body_limits.max_depth, MAX_NESTING);
        assert_eq!(s.engine.retention_ms, 43_200_000);
        for (options, error) in [
            (
                r#"{"baseUrl":"gw","user":null}"#,
                "baseUrl `gw` must be an absolute http(s) URL with a host, no credentials, query or fragment",
            ),
            (
                r#"{"baseUrl":"http://me:pw@gw","user":null}"#,
                "baseUrl `http://me:pw@gw` must be an absolute http(s) URL with a host, no credentials, query or fragment",
            ),
            (
                r#"{"baseUrl":"http://gw","user":null,"requestId":"v9"}"#,
                "requestId `v9`: use 'v7' or 'v4'",
            ),
        ] {
            assert_eq!(settings(options).err().as_deref(), Some(error));
        }
        assert!(
            settings(r#"{"baseUrl":"http://gw","user":null,"waitStage":"DONE"}"#)
                .err()
                .is_some_and(|e| e.starts_with("unknown wait stage `DONE`"))
        );
    }
}
