//! What a caller's command says, and the intent and drive settings it
//! becomes: the client's defaults applied, the route and the method
//! decided, every field checked. Pure, so every rule here is tested
//! natively; `js/input.rs` only answers what each of the caller's values
//! is ([`Given`]).

use crate::caller_fields::{CallerFields, Given};
use crate::journal::{AggregateIdentity, Body, CommandSpec, NewIntent, RequestIdPolicy, WaitSpec};
use crate::machine::MachineConfig;
use crate::protocol::{
    is_command_method, AggregateRoute, CommandHeaders, CommandStage, JsonLimits, JsonValue,
};
use crate::text::text;

/// The aggregate part of a command.
#[derive(Debug)]
pub struct AggregateInput {
    /// Context alias, for another bounded context.
    pub context_alias: Option<String>,
    /// Resource name.
    pub resource: String,
    /// Aggregate id (generated client-side for creates when absent).
    pub id: Option<String>,
    /// Tenant id (path), when the aggregate has no static tenant.
    pub tenant_id: Option<String>,
    /// Owner id (path).
    pub owner_id: Option<String>,
}

/// A command as the caller gives it.
#[derive(Debug)]
pub struct CommandInput {
    /// Where it goes.
    pub aggregate: AggregateInput,
    /// snake_case command name (the path's action).
    pub action: Option<String>,
    /// HTTP method (default POST for creates, PUT otherwise).
    pub method: Option<String>,
    /// Full path, instead of aggregate + action.
    pub path: Option<String>,
    /// The command body.
    pub body: Option<Body>,
    /// Business key: same key, same intent.
    pub intent_key: Option<String>,
    /// The scope whose intents go one after another.
    pub scope: Option<String>,
    /// Wait stage.
    pub wait_stage: Option<String>,
    /// Wait context filter.
    pub wait_context: Option<String>,
    /// Wait processor filter.
    pub wait_processor: Option<String>,
    /// Wait function filter.
    pub wait_function: Option<String>,
    /// Chain tail stage.
    pub wait_tail_stage: Option<String>,
    /// Expected current version.
    pub expected_version: Option<i64>,
    /// Caller timeout for this command.
    pub timeout_ms: Option<u64>,
    /// Server-side wait timeout for this command.
    pub wait_timeout_ms: Option<u64>,
    /// Extra, non-secret headers (persisted with the intent), by name.
    pub headers: Option<Vec<(String, String)>>,
    /// Whether the command creates its aggregate.
    pub create: Option<bool>,
    /// Whether the aggregate id is a path segment (default: not for creates).
    pub id_in_path: Option<bool>,
}

impl CommandInput {
    /// Reads a command given to `send`, `sendAndWait` or `sendAndWaitStream`;
    /// `body` reads its body (within the client's limits), told the field's
    /// path for its errors.
    pub fn read<V: Given>(
        command: V,
        body: impl FnOnce(&V, &str) -> Result<Body, String>,
    ) -> Result<CommandInput, String> {
        let c = CallerFields::of("command", command)?;
        let Some(a) = c.object("aggregate") else {
            c.refuse("command.aggregate is required".into());
            return Err(c.first_error());
        };
        // In the order the fields were always read, so the same one is named.
        let context_alias = a.string("contextAlias");
        let resource = a.string("resource");
        if resource.is_none() {
            a.refuse("command.aggregate.resource is required".into());
        }
        let read = CommandInput {
            aggregate: AggregateInput {
                context_alias,
                resource: resource.unwrap_or_default(),
                id: a.string("id"),
                tenant_id: a.string("tenantId"),
                owner_id: a.string("ownerId"),
            },
            action: c.string("action"),
            method: c.string("method"),
            path: c.string("path"),
            body: c.with("body", body),
            intent_key: c.string("intentKey"),
            scope: c.string("scope"),
            wait_stage: c.string("waitStage"),
            wait_context: c.string("waitContext"),
            wait_processor: c.string("waitProcessor"),
            wait_function: c.string("waitFunction"),
            wait_tail_stage: c.string("waitTailStage"),
            expected_version: c
                .count("expectedVersion")
                .map(|v| v.min(i64::MAX as u64) as i64),
            timeout_ms: c.count("timeoutMs"),
            wait_timeout_ms: c.count("waitTimeoutMs"),
            headers: c.string_map("headers"),
            create: c.boolean("create"),
            id_in_path: c.boolean("idInPath"),
        };
        a.known();
        c.known();
        c.finish(read)
    }
}

/// The mistake of a command whose own `headers` carry a credential
/// (`Authorization`, `Cookie`, `Proxy-Authorization`, or a name the app
/// lists as secret: a command's headers are kept with its intent, in
/// storage, where no credential may be), or a `Command-Header-<key>`
/// whose key Wow reserves (the gateway refuses the command). A
/// `TypeError`, nothing written.
pub fn header_mistake(input: &CommandInput, secrets: &str) -> Option<String> {
    input.headers.as_ref()?.iter().find_map(|(name, _)| {
        if crate::journal::is_secret(name, secrets) {
            return Some(text!(
                "command.headers.",
                name,
                " is a credential, and a command's headers are stored with its intent: give it \
                 through connect({ headers }), which is asked before each request and never stored"
            ));
        }
        let key = crate::protocol::headers::reserved_command_header(name)?;
        Some(text!(
            "command.headers.",
            name,
            ": Wow reserves the message header key `",
            key,
            "` (the framework writes it; a Command-Header- setting it is refused with 400 \
             IllegalArgument)"
        ))
    })
}

/// Parses a stage name.
pub fn stage(name: &str) -> Result<CommandStage, String> {
    CommandStage::from_header(name).ok_or_else(|| {
        text!(
            "unknown wait stage `",
            name,
            "`: one of SENT, PROCESSED, SNAPSHOT, PROJECTED, EVENT_HANDLED, SAGA_HANDLED"
        )
    })
}

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
    /// Limits on command bodies.
    pub body_limits: JsonLimits,
}

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
        Some(p) => {
            crate::protocol::check_path(&p)?;
            p
        }
        None => {
            if input.action.is_none() && !id_in_path {
                return Err("give `action` (the command's snake_case name) or `path`".into());
            }
            let id_segment = if id_in_path { id.as_deref() } else { None };
            route
                .command_path(id_segment, input.action.as_deref())
                .map_err(|e| e.message())?
        }
    };
    let method = input
        .method
        .unwrap_or_else(|| if create { "POST" } else { "PUT" }.into())
        .to_ascii_uppercase();
    if !is_command_method(&method) {
        return Err(text!("method `", method, "` is not a command method"));
    }
    let headers = input.headers.unwrap_or_default();
    let mut check = CommandHeaders::new();
    for (name, value) in &headers {
        check.set(name, value).map_err(|e| e.message())?;
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
    if input.scope.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return Err("scope must be a non-empty string (leave it out to send on its own)".into());
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
            body: input
                .body
                .unwrap_or_else(|| JsonValue::empty_object().into()),
            expected_version: input.expected_version,
            create,
            wait,
            headers,
        },
        scope: input.scope,
    };
    let config = MachineConfig {
        caller_timeout_ms: timeout_ms,
        stream,
        ..defaults.config.clone()
    };
    Ok((intent, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn defaults() -> Defaults {
        Defaults {
            config: MachineConfig::default(),
            wait_stage: CommandStage::Processed,
            wait_timeout_ms: None,
            policy: RequestIdPolicy::RandomV7,
            body_limits: JsonLimits::default(),
        }
    }

    pub(super) fn command(resource: &str, id: Option<&str>, action: Option<&str>) -> CommandInput {
        CommandInput {
            aggregate: AggregateInput {
                context_alias: None,
                resource: resource.into(),
                id: id.map(Into::into),
                tenant_id: None,
                owner_id: None,
            },
            action: action.map(Into::into),
            method: None,
            path: None,
            body: None,
            intent_key: None,
            scope: None,
            wait_stage: None,
            wait_context: None,
            wait_processor: None,
            wait_function: None,
            wait_tail_stage: None,
            expected_version: None,
            timeout_ms: None,
            wait_timeout_ms: None,
            headers: None,
            create: None,
            id_in_path: None,
        }
    }

    fn built(c: CommandInput) -> (NewIntent, MachineConfig) {
        intent(c, &defaults(), false).unwrap()
    }

    fn refused(c: CommandInput) -> String {
        intent(c, &defaults(), false).unwrap_err()
    }

    #[test]
    fn a_credential_among_a_commands_headers_is_a_mistake() {
        let secrets = "X-Api-Key";
        for name in [
            "Authorization",
            "cookie",
            "PROXY-Authorization",
            "x-api-key",
        ] {
            let mut c = command("account", Some("a-1"), Some("x"));
            c.headers = Some(vec![
                ("Command-Header-Trace".into(), "t".into()),
                (name.into(), "secret".into()),
            ]);
            let why = header_mistake(&c, secrets).expect(name);
            assert!(
                why.starts_with(&text!("command.headers.", name, " is a credential"))
                    && why.contains("connect({ headers })"),
                "{why}"
            );
        }
        let mut c = command("account", Some("a-1"), Some("x"));
        c.headers = Some(vec![("Command-Header-Trace".into(), "t".into())]);
        assert_eq!(header_mistake(&c, secrets), None);
        assert_eq!(
            header_mistake(&command("a", Some("b"), Some("x")), ""),
            None
        );
    }

    #[test]
    fn a_command_header_key_wow_reserves_is_a_mistake() {
        // Wow 9's own list (CommandRequestExtendHeaderAppenderTest).
        for name in [
            "Command-Header-command_operator",
            "command-header-command_operator",
            "Command-Header-Command_Operator",
            "Command-Header-local_first",
            "Command-Header-trace_id",
            "Command-Header-upstream_id",
            "Command-Header-upstream_name",
            "Command-Header-user_agent",
            "Command-Header-remote_ip",
            "Command-Header-command_wait_id",
            "Command-Header-command_wait_tail_stage",
            "Command-Header-command_wait_anything",
            "Command-Header-compensate.id",
            "Command-Header-traceparent",
            "Command-Header-app_id",
            "command-header-device_id",
        ] {
            let mut c = command("account", Some("a-1"), Some("x"));
            c.headers = Some(vec![
                ("Command-Header-app".into(), "oms".into()),
                (name.into(), "spoofed".into()),
            ]);
            let why = header_mistake(&c, "").expect(name);
            assert!(
                why.starts_with(&text!("command.headers.", name, ": Wow reserves"))
                    && why.contains(&name["Command-Header-".len()..])
                    && why.contains("IllegalArgument"),
                "{why}"
            );
        }
        // Its neighbours are the app's own keys.
        for name in [
            "Command-Header-app",
            "Command-Header-trace",
            "Command-Header-operator",
            "X-Trace-Id",
            "Command-Head",
        ] {
            let mut c = command("account", Some("a-1"), Some("x"));
            c.headers = Some(vec![(name.into(), "v".into())]);
            assert_eq!(header_mistake(&c, ""), None, "{name}");
        }
    }

    #[test]
    fn a_scope_is_carried_into_the_intent_and_a_blank_one_is_refused() {
        let mut c = command("account", Some("a-1"), Some("lock_amount"));
        c.scope = Some("account:a-1".into());
        assert_eq!(built(c).0.scope.as_deref(), Some("account:a-1"));
        assert_eq!(
            built(command("account", Some("a-1"), Some("x"))).0.scope,
            None
        );
        for blank in ["", "  "] {
            let mut c = command("account", Some("a-1"), Some("lock_amount"));
            c.scope = Some(blank.into());
            assert_eq!(
                refused(c),
                "scope must be a non-empty string (leave it out to send on its own)"
            );
        }
    }

    #[test]
    fn a_command_goes_to_its_aggregate_by_put_with_the_defaults() {
        let (i, config) = built(command("account", Some("a-1"), Some("lock_amount")));
        assert_eq!(i.command.path, "/account/a-1/lock_amount");
        assert_eq!(i.command.method, "PUT");
        assert!(!i.command.create);
        assert_eq!(i.aggregate.aggregate_id, "a-1");
        assert_eq!(i.command.body, JsonValue::empty_object().into());
        assert_eq!(i.command.wait.stage, CommandStage::Processed);
        let base = MachineConfig::default();
        assert_eq!(config.caller_timeout_ms, base.caller_timeout_ms);
        assert_eq!(i.command.wait.timeout_ms, base.caller_timeout_ms);
        assert!(!config.stream);
    }

    #[test]
    fn a_create_is_posted_to_the_resource_with_its_id_left_to_the_header() {
        let mut c = command("account", Some("a-1"), Some("create_account"));
        c.create = Some(true);
        let (i, _) = built(c);
        assert_eq!(
            (i.command.path.as_str(), i.command.method.as_str()),
            ("/account/create_account", "POST")
        );
        assert_eq!(i.aggregate.aggregate_id, "a-1");
        // Without an id the journal makes one; the route needs none.
        let mut c = command("account", None, Some("create_account"));
        c.create = Some(true);
        assert_eq!(built(c).0.aggregate.aggregate_id, "");
        // An expected version of 0 says "create" when `create` is not given.
        let mut c = command("account", Some("a-2"), Some("create_account"));
        c.expected_version = Some(0);
        assert!(built(c).0.command.create);
    }

    #[test]
    fn the_route_carries_context_tenant_and_owner() {
        let mut c = command("cart", Some("me"), Some("add_cart_item"));
        c.aggregate.owner_id = Some("me".into());
        c.aggregate.tenant_id = Some("t1".into());
        let path = built(c).0.command.path;
        assert!(path.starts_with("/tenant/t1/owner/me/cart/me/"), "{path}");
    }

    #[test]
    fn what_cannot_make_a_command_is_refused_naming_it() {
        assert_eq!(
            refused(command(" ", Some("a"), Some("x"))),
            "aggregate.resource is required"
        );
        assert_eq!(
            refused(command("account", None, Some("lock_amount"))),
            "aggregate.id is required for a command that does not create its aggregate"
        );
        // An empty id is no id.
        assert!(refused(command("account", Some(""), Some("x"))).contains("aggregate.id"));
        let mut c = command("account", Some("a"), None);
        c.path = Some("account/a/x".into());
        assert_eq!(refused(c), "path `account/a/x` must start with `/`");
        let mut c = command("account", Some("a"), None);
        c.path = Some("/account/../admin/x".into());
        assert_eq!(refused(c), "path `/account/../admin/x` holds a dot segment");
        let mut c = command("account", Some("a"), None);
        c.id_in_path = Some(false);
        assert_eq!(
            refused(c),
            "give `action` (the command's snake_case name) or `path`"
        );
        let mut c = command("account", Some("a"), Some("x"));
        c.method = Some("get".into());
        assert_eq!(refused(c), "method `GET` is not a command method");
        let mut c = command("account", Some("a"), Some("x"));
        c.headers = Some(vec![("X-Bad".into(), "a\nb".into())]);
        assert!(refused(c).contains("X-Bad"));
        let mut c = command("account", Some("a"), Some("x"));
        c.wait_stage = Some("DONE".into());
        assert!(refused(c).starts_with("unknown wait stage `DONE`"));
        let mut c = command("account", Some("a"), Some("x"));
        c.wait_tail_stage = Some("SNAPSHOT".into());
        assert_eq!(refused(c), "waitTailStage needs waitStage SAGA_HANDLED");
    }

    #[test]
    fn the_server_waits_as_long_as_it_is_told_then_as_the_client_default_then_as_the_caller() {
        let wait = |input: Option<u64>, client: Option<u64>, caller: Option<u64>| {
            let mut c = command("account", Some("a"), Some("x"));
            c.wait_timeout_ms = input;
            c.timeout_ms = caller;
            let d = Defaults {
                wait_timeout_ms: client,
                ..defaults()
            };
            let (i, config) = intent(c, &d, true).unwrap();
            assert!(config.stream);
            (i.command.wait.timeout_ms, config.caller_timeout_ms)
        };
        assert_eq!(wait(Some(5), Some(7), Some(9)), (5, 9));
        assert_eq!(wait(None, Some(7), Some(9)), (7, 9));
        assert_eq!(wait(None, None, Some(9)), (9, 9));
        // Never 0: the header must be positive.
        assert_eq!(wait(Some(0), None, Some(9)).0, 1);
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod properties {
    use super::tests::{command, defaults};
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the caller gives, an intent that is built is one the
        /// request can carry: a path from the root, a command method, a
        /// create iff the caller said so (or gave expected version 0), and
        /// the id in the path exactly when it is not a create (by default).
        #[test]
        fn a_built_intent_is_always_sendable(
            resource in "[a-z_]{1,12}",
            id in proptest::option::of("[A-Za-z0-9 ./%-]{0,12}"),
            action in proptest::option::of("[a-z_]{1,12}"),
            create in proptest::option::of(any::<bool>()),
            expected in proptest::option::of(0i64..3),
            method in proptest::option::of(prop_oneof!["post", "PUT", "patch", "DELETE", "GET"]),
        ) {
            let mut c = command(&resource, id.as_deref(), action.as_deref());
            c.create = create;
            c.expected_version = expected;
            c.method = method;
            if let Ok((i, _)) = intent(c, &defaults(), false) {
                prop_assert!(i.command.path.starts_with('/'));
                prop_assert!(is_command_method(&i.command.method));
                prop_assert_eq!(i.command.create, create.unwrap_or(expected == Some(0)));
                let id = id.filter(|id| !id.is_empty());
                if !i.command.create {
                    prop_assert!(id.is_some());
                }
                prop_assert_eq!(i.aggregate.aggregate_id, id.unwrap_or_default());
            }
        }
    }
}
