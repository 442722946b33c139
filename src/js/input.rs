//! Reading the caller's options and commands, with clear errors for bad input.

#[cfg(feature = "client")]
use std::collections::BTreeMap;

#[cfg(feature = "client")]
use serde::Deserialize;
use wasm_bindgen::{JsCast, JsValue};

#[cfg(feature = "client")]
use crate::core::journal::{AggregateIdentity, CommandSpec, NewIntent, RequestIdPolicy, WaitSpec};
#[cfg(feature = "client")]
use crate::core::machine::MachineConfig;
#[cfg(feature = "client")]
use crate::core::protocol::{AggregateRoute, CommandHeaders, CommandStage, JsonValue};

#[cfg(feature = "client")]
/// Retry settings as given.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
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

#[cfg(feature = "client")]
/// `WowClient.connect` options (functions and adapters are read separately).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectInput {
    /// The gateway's base URL.
    pub base_url: String,
    /// Storage namespace (user / tenant).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Caller timeout per attempt.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Default wait stage.
    #[serde(default)]
    pub wait_stage: Option<String>,
    /// Server-side wait timeout (`Command-Wait-Timeout`).
    #[serde(default)]
    pub wait_timeout_ms: Option<u64>,
    /// Retry settings.
    #[serde(default)]
    pub retry: Option<RetryInput>,
    /// Also send `Command-Wait-Timout`.
    #[serde(default)]
    pub legacy_wait_timeout: Option<bool>,
    /// `"v7"` (default) or `"v4"`.
    #[serde(default)]
    pub request_id: Option<String>,
    /// Settled intents are kept this many days (default 7).
    #[serde(default)]
    pub retention_days: Option<f64>,
    /// Resume unresolved intents right after connecting (needs Web Locks).
    #[serde(default)]
    pub resume: Option<bool>,
    /// Ask the browser to keep storage under pressure.
    #[serde(default)]
    pub persist_storage: Option<bool>,
}

#[cfg(feature = "client")]
/// The aggregate part of a command.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AggregateInput {
    /// Context alias, for another bounded context.
    #[serde(default)]
    pub context_alias: Option<String>,
    /// Resource name.
    pub resource: String,
    /// Aggregate id (generated client-side for creates when absent).
    #[serde(default)]
    pub id: Option<String>,
    /// Tenant id (path), when the aggregate has no static tenant.
    #[serde(default)]
    pub tenant_id: Option<String>,
    /// Owner id (path).
    #[serde(default)]
    pub owner_id: Option<String>,
}

#[cfg(feature = "client")]
/// A command as the caller gives it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandInput {
    /// Where it goes.
    pub aggregate: AggregateInput,
    /// snake_case command name (the path's action).
    #[serde(default)]
    pub action: Option<String>,
    /// HTTP method (default POST for creates, PUT otherwise).
    #[serde(default)]
    pub method: Option<String>,
    /// Full path, instead of aggregate + action.
    #[serde(default)]
    pub path: Option<String>,
    /// The command body.
    #[serde(default)]
    pub body: Option<JsonValue>,
    /// Business key: same key, same intent.
    #[serde(default)]
    pub intent_key: Option<String>,
    /// Wait stage.
    #[serde(default)]
    pub wait_stage: Option<String>,
    /// Wait context filter.
    #[serde(default)]
    pub wait_context: Option<String>,
    /// Wait processor filter.
    #[serde(default)]
    pub wait_processor: Option<String>,
    /// Wait function filter.
    #[serde(default)]
    pub wait_function: Option<String>,
    /// Chain tail stage.
    #[serde(default)]
    pub wait_tail_stage: Option<String>,
    /// Expected current version.
    #[serde(default)]
    pub expected_version: Option<i64>,
    /// Caller timeout for this command.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Server-side wait timeout for this command.
    #[serde(default)]
    pub wait_timeout_ms: Option<u64>,
    /// Extra, non-secret headers (persisted with the intent).
    #[serde(default)]
    pub headers: Option<BTreeMap<String, String>>,
    /// Whether the command creates its aggregate.
    #[serde(default)]
    pub create: Option<bool>,
    /// Whether the aggregate id is a path segment (default: not for creates).
    #[serde(default)]
    pub id_in_path: Option<bool>,
}

#[cfg(feature = "client")]
/// Reads a JS value into `T`, naming what was being read on failure.
pub fn read<T: serde::de::DeserializeOwned>(what: &str, value: JsValue) -> Result<T, String> {
    if value.is_undefined() || value.is_null() {
        return Err(format!("{what} is required"));
    }
    serde_wasm_bindgen::from_value(value).map_err(|e| format!("invalid {what}: {e}"))
}

/// A function-valued option, if present.
pub fn function(options: &JsValue, name: &str) -> Result<Option<js_sys::Function>, String> {
    let value = js_sys::Reflect::get(options, &name.into()).unwrap_or(JsValue::UNDEFINED);
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value
        .dyn_into::<js_sys::Function>()
        .map(Some)
        .map_err(|_| format!("option `{name}` must be a function"))
}

#[cfg(feature = "client")]
/// Parses a stage name.
pub fn stage(name: &str) -> Result<CommandStage, String> {
    CommandStage::from_header(name).ok_or_else(|| {
        format!("unknown wait stage `{name}`: one of SENT, PROCESSED, SNAPSHOT, PROJECTED, EVENT_HANDLED, SAGA_HANDLED")
    })
}

#[cfg(feature = "client")]
/// Client-wide defaults.
#[derive(Clone, Debug)]
pub struct Defaults {
    /// Machine settings.
    pub config: MachineConfig,
    /// Default wait stage.
    pub wait_stage: CommandStage,
    /// Server-side wait timeout, when set apart from the caller timeout.
    pub wait_timeout_ms: Option<u64>,
    /// requestId policy.
    pub policy: RequestIdPolicy,
}

#[cfg(feature = "client")]
/// Turns a command into an intent and its machine settings.
pub fn intent(
    input: CommandInput,
    defaults: &Defaults,
    stream: bool,
) -> Result<(NewIntent, MachineConfig), String> {
    let a = input.aggregate;
    if a.resource.trim().is_empty() {
        return Err("aggregate.resource is required".into());
    }
    let create = input.create.unwrap_or(input.expected_version == Some(0));
    let id_in_path = input.id_in_path.unwrap_or(!create);
    let id = a.id.clone().filter(|id| !id.is_empty());
    if !create && id.is_none() {
        return Err(
            "aggregate.id is required for a command that does not create its aggregate".into(),
        );
    }
    let route = AggregateRoute {
        prefix: None,
        context_alias: a.context_alias.clone(),
        tenant_id: a.tenant_id.clone(),
        owner_id: a.owner_id.clone(),
        resource: a.resource.clone(),
    };
    let path = match input.path {
        Some(p) if p.starts_with('/') => p,
        Some(p) => return Err(format!("path `{p}` must start with `/`")),
        None => {
            if input.action.is_none() && !id_in_path {
                return Err("give `action` (the command's snake_case name) or `path`".into());
            }
            let id_segment = if id_in_path { id.as_deref() } else { None };
            route
                .command_path(id_segment, input.action.as_deref())
                .map_err(|e| e.to_string())?
        }
    };
    let method = input
        .method
        .unwrap_or_else(|| if create { "POST" } else { "PUT" }.into())
        .to_ascii_uppercase();
    if !matches!(method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE") {
        return Err(format!("method `{method}` is not a command method"));
    }
    let headers: Vec<(String, String)> = input.headers.unwrap_or_default().into_iter().collect();
    let mut check = CommandHeaders::new();
    for (name, value) in &headers {
        check.set(name, value).map_err(|e| e.to_string())?;
    }
    let timeout_ms = input
        .timeout_ms
        .unwrap_or(defaults.config.caller_timeout_ms);
    let wait = WaitSpec {
        stage: match &input.wait_stage {
            Some(s) => stage(s)?,
            None => defaults.wait_stage,
        },
        context: input.wait_context,
        processor: input.wait_processor,
        function: input.wait_function,
        tail_stage: input.wait_tail_stage.as_deref().map(stage).transpose()?,
        timeout_ms: input
            .wait_timeout_ms
            .or(defaults.wait_timeout_ms)
            .unwrap_or(timeout_ms)
            .max(1),
    };
    if wait.tail_stage.is_some() && wait.stage != CommandStage::SagaHandled {
        return Err("waitTailStage needs waitStage SAGA_HANDLED".into());
    }
    let intent = NewIntent {
        intent_key: input.intent_key,
        aggregate: AggregateIdentity {
            context_alias: a.context_alias,
            resource: a.resource,
            tenant_id: a.tenant_id,
            owner_id: a.owner_id,
            aggregate_id: id.unwrap_or_default(),
        },
        command: CommandSpec {
            method,
            path,
            body: input.body.unwrap_or_else(JsonValue::empty_object),
            expected_version: input.expected_version,
            create,
            wait,
            headers,
        },
    };
    let config = MachineConfig {
        caller_timeout_ms: timeout_ms,
        stream,
        ..defaults.config.clone()
    };
    Ok((intent, config))
}
