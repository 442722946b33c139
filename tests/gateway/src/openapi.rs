//! The OpenAPI 3.1 document of what the gateway serves, in the shape of the
//! document a Wow service serves (`tests/fixtures/wow-8.10.10/example-domain-openapi.json`):
//! operation ids `<context alias>.<aggregate>.<command>`, the `wow.*` header
//! parameters and responses by `$ref`, one request-body schema per command,
//! and per aggregate its state and its domain event stream. Built from the
//! same tables the router uses (`domain::AGGREGATES`, `domain::COMMANDS`), so
//! it cannot list a route that is not served.

use serde_json::{json, Map, Value};

use crate::domain::{pascal, AggregateType, CommandDef, Owner, AGGREGATES, COMMANDS};

/// Where a Wow service (springdoc) serves its document.
pub const PATH: &str = "/v3/api-docs";

/// The headers every command operation lists (`COMMAND_COMMON_HEADERS`).
const COMMAND_HEADERS: &[&str] = &[
    "Accept",
    "Command-Aggregate-Id",
    "Command-Aggregate-Version",
    "Command-Local-First",
    "Command-Request-Id",
    "Command-Wait-Context",
    "Command-Wait-Function",
    "Command-Wait-Processor",
    "Command-Wait-Stage",
    "Command-Wait-Tail-Context",
    "Command-Wait-Tail-Function",
    "Command-Wait-Tail-Processor",
    "Command-Wait-Tail-Stage",
    "Command-Wait-Timeout",
];

fn alias(agg: &AggregateType) -> &'static str {
    match agg.context {
        "transfer-service" => "transfer",
        _ => "example",
    }
}

fn string() -> Value {
    json!({"type": "string"})
}
fn positive_int() -> Value {
    json!({"type": "integer", "format": "int64", "exclusiveMinimum": 0})
}
fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}
fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// The body schema of a command (what `domain::validate` and `handle` read).
fn command_body(cmd: &CommandDef) -> Value {
    let amount = || json!({"amount": positive_int()});
    match cmd.name {
        "create_account" => object(
            json!({"name": {"type": "string", "minLength": 1}, "balance": {"type": "integer", "format": "int64", "minimum": 0}}),
            &["name", "balance"],
        ),
        "prepare" => object(
            json!({"to": {"type": "string", "minLength": 1}, "amount": positive_int()}),
            &["to", "amount"],
        ),
        "entry" => object(
            json!({"sourceId": string(), "amount": positive_int()}),
            &["sourceId", "amount"],
        ),
        "confirm" | "lock_amount" | "unlock_amount" => object(amount(), &["amount"]),
        "freeze_account" | "unfreeze_account" => object(json!({"reason": string()}), &[]),
        "add_cart_item" => object(
            json!({"productId": {"type": "string", "minLength": 1}, "quantity": {"type": "integer", "format": "int32", "exclusiveMinimum": 0}}),
            &["productId"],
        ),
        "change_quantity" => object(
            json!({"productId": {"type": "string", "minLength": 1}, "quantity": {"type": "integer", "format": "int32", "exclusiveMinimum": 0}}),
            &["productId", "quantity"],
        ),
        "remove_cart_item" => object(
            json!({"productIds": {"type": "array", "items": string(), "minItems": 1}}),
            &["productIds"],
        ),
        "create_order" => object(
            json!({
                "items": {"type": "array", "minItems": 1, "items": schema_ref("example.order.CreateOrder.Item")},
                "address": schema_ref("example.order.ShippingAddress"),
                "fromCart": {"type": "boolean"}
            }),
            &["items", "address", "fromCart"],
        ),
        "pay_order" => object(
            json!({"paymentId": {"type": "string", "minLength": 1}, "amount": {"type": "number", "exclusiveMinimum": 0}}),
            &["paymentId", "amount"],
        ),
        _ => json!({"type": "object"}),
    }
}

/// The schema name of a command's body.
fn body_schema_name(cmd: &CommandDef, agg: &AggregateType) -> String {
    match cmd.name {
        "delete_aggregate" => "wow.api.command.DefaultDeleteAggregate".into(),
        "recover_aggregate" => "wow.api.command.DefaultRecoverAggregate".into(),
        name => format!("{}.{}.{}", alias(agg), agg.name, pascal(name)),
    }
}

fn operation_name(cmd: &CommandDef) -> String {
    match cmd.name {
        "delete_aggregate" | "recover_aggregate" => format!("default_{}", cmd.name),
        name => name.to_owned(),
    }
}

/// Every event an aggregate stores, with its body schema.
fn events(agg: &AggregateType) -> Vec<(&'static str, Value)> {
    let amount = || {
        object(
            json!({"amount": {"type": "integer", "format": "int64"}}),
            &["amount"],
        )
    };
    let transfer = || {
        object(
            json!({"sourceId": string(), "amount": {"type": "integer", "format": "int64"}}),
            &["sourceId", "amount"],
        )
    };
    let mut list = match agg.name {
        "account" => vec![
            (
                "account_created",
                object(
                    json!({"name": string(), "balance": {"type": "integer", "format": "int64"}}),
                    &["name", "balance"],
                ),
            ),
            (
                "prepared",
                object(
                    json!({"to": string(), "amount": {"type": "integer", "format": "int64"}}),
                    &["to", "amount"],
                ),
            ),
            ("amount_locked", amount()),
            ("amount_unlocked", amount()),
            ("amount_entered", transfer()),
            ("entry_failed", transfer()),
            ("confirmed", amount()),
            ("account_frozen", object(json!({"reason": string()}), &[])),
            ("account_unfrozen", object(json!({"reason": string()}), &[])),
        ],
        "cart" => vec![
            (
                "cart_item_added",
                object(
                    json!({"added": schema_ref("example.cart.CartItem")}),
                    &["added"],
                ),
            ),
            (
                "cart_quantity_changed",
                object(
                    json!({"changed": schema_ref("example.cart.CartItem")}),
                    &["changed"],
                ),
            ),
            (
                "cart_item_removed",
                object(
                    json!({"productIds": {"type": "array", "items": string()}}),
                    &["productIds"],
                ),
            ),
        ],
        _ => vec![
            (
                "order_created",
                object(
                    json!({
                        "orderId": string(),
                        "items": {"type": "array", "items": schema_ref("example.order.CreateOrder.Item")},
                        "address": schema_ref("example.order.ShippingAddress"),
                        "fromCart": {"type": "boolean"},
                        "totalAmount": {"type": "number"}
                    }),
                    &["orderId", "items", "address", "fromCart", "totalAmount"],
                ),
            ),
            (
                "order_paid",
                object(
                    json!({"amount": {"type": "number"}, "paid": {"type": "boolean"}}),
                    &["amount", "paid"],
                ),
            ),
            (
                "order_pay_duplicated",
                object(
                    json!({"paymentId": string(), "errorMsg": string()}),
                    &["paymentId", "errorMsg"],
                ),
            ),
        ],
    };
    list.push(("default_aggregate_deleted", json!({"type": "object"})));
    list.push(("default_aggregate_recovered", json!({"type": "object"})));
    list
}

fn state(agg: &AggregateType) -> Value {
    match agg.name {
        "account" => object(
            json!({
                "id": string(), "name": string(),
                "balanceAmount": {"type": "integer", "format": "int64"},
                "lockedAmount": {"type": "integer", "format": "int64"},
                "frozen": {"type": "boolean"}, "deleted": {"type": "boolean"}
            }),
            &["id"],
        ),
        "cart" => object(
            json!({"id": string(), "items": {"type": "array", "items": schema_ref("example.cart.CartItem")}}),
            &["id"],
        ),
        _ => object(
            json!({
                "id": string(),
                "items": {"type": "array", "items": schema_ref("example.order.CreateOrder.Item")},
                "address": schema_ref("example.order.ShippingAddress"),
                "totalAmount": {"type": "number"}, "paidAmount": {"type": "number"},
                "status": {"type": "string", "enum": ["CREATED", "PAID"]}
            }),
            &["id"],
        ),
    }
}

fn param_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/parameters/wow.{name}") })
}

/// `[/tenant/{tenantId}] [/owner/{ownerId}] /{resource}` and its parameters.
fn scope(agg: &AggregateType, with_owner: bool) -> (String, Vec<Value>) {
    let mut path = String::new();
    let mut params = Vec::new();
    if agg.static_tenant.is_none() {
        path.push_str("/tenant/{tenantId}");
        params.push(param_ref("tenantId"));
    }
    if with_owner && agg.owner != Owner::Never {
        path.push_str("/owner/{ownerId}");
        params.push(param_ref("ownerId"));
    }
    path.push('/');
    path.push_str(agg.resource);
    (path, params)
}

fn command_operation(cmd: &CommandDef, agg: &AggregateType) -> (String, String, Value) {
    // `PayOrder` is routed without the owner (`appendOwnerPath = NEVER`), as in the reference.
    let (mut path, mut params) = scope(agg, cmd.name != "pay_order");
    if cmd.id_in_path && agg.owner != Owner::AggregateId {
        path.push_str("/{id}");
        params.push(param_ref("id"));
    }
    if !cmd.action.is_empty() {
        path.push('/');
        path.push_str(cmd.action);
    }
    params.extend(COMMAND_HEADERS.iter().map(|h| param_ref(h)));
    if agg.static_tenant.is_none() {
        params.push(param_ref("Wow-Space-Id"));
    }
    let tag = format!("{}.{}", alias(agg), agg.name);
    let responses = json!({
        "200": {"$ref": "#/components/responses/wow.CommandOk"},
        "400": {"$ref": "#/components/responses/wow.CommandBadRequest"},
        "404": {"$ref": "#/components/responses/wow.CommandNotFound"},
        "408": {"$ref": "#/components/responses/wow.CommandRequestTimeout"},
        "409": {"$ref": "#/components/responses/wow.CommandVersionConflict"},
        "410": {"$ref": "#/components/responses/wow.CommandIllegalAccessDeletedAggregate"},
        "429": {"$ref": "#/components/responses/wow.CommandTooManyRequests"}
    });
    let op = json!({
        "operationId": format!("{tag}.{}", operation_name(cmd)),
        "parameters": params,
        "requestBody": {"content": {"application/json": {"schema": schema_ref(&body_schema_name(cmd, agg))}}},
        "responses": responses,
        "tags": [tag],
    });
    (path, cmd.method.to_ascii_lowercase(), op)
}

fn add(paths: &mut Map<String, Value>, path: String, method: &str, op: Value) {
    let entry = paths.entry(path).or_insert_with(|| json!({}));
    entry[method] = op;
}

/// The whole document, stating Wow `version` (the rules the gateway's mode
/// follows) in `info`'s `x-wow-version`; its schemas are 8.10.10's.
pub fn document(version: &str) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    let mut tags = Vec::new();
    for agg in AGGREGATES {
        let tag = format!("{}.{}", alias(agg), agg.name);
        tags.push(json!({"name": tag}));
        for cmd in COMMANDS.iter().filter(|c| c.aggregate == agg.name) {
            let (path, method, op) = command_operation(cmd, agg);
            add(&mut paths, path, &method, op);
            let name = body_schema_name(cmd, agg);
            let mut body = command_body(cmd);
            if let Some(title) = match cmd.name {
                "delete_aggregate" => Some("Delete aggregate"),
                "recover_aggregate" => Some("Recover deleted aggregate"),
                _ => None,
            } {
                body["title"] = json!(title);
            }
            schemas.insert(name, body);
        }
        // State: `GET …/{id}/state` (owner = aggregate id: `GET /owner/{ownerId}/{resource}/state`).
        let p = pascal(agg.name);
        let state_name = format!("{tag}.{p}State");
        let events_name = format!("{tag}.{p}AggregatedDomainEventStream");
        schemas.insert(state_name.clone(), state(agg));
        let (mut state_path, mut state_params) = scope(agg, agg.owner == Owner::AggregateId);
        if agg.owner != Owner::AggregateId {
            state_path.push_str("/{id}");
            state_params.push(param_ref("id"));
        }
        state_path.push_str("/state");
        let ok = |schema: Value| {
            json!({"200": {"content": {"application/json": {"schema": schema}},
                          "headers": {"Wow-Error-Code": {"$ref": "#/components/headers/wow.Wow-Error-Code"}}},
                   "400": {"$ref": "#/components/responses/wow.BadRequest"},
                   "404": {"$ref": "#/components/responses/wow.NotFound"}})
        };
        add(
            &mut paths,
            state_path,
            "get",
            json!({"operationId": if agg.static_tenant.is_none() { format!("{tag}.tenant.aggregate.load") } else { format!("{tag}.aggregate.load") },
                   "parameters": state_params,
                   "responses": ok(schema_ref(&state_name)), "tags": [tag]}),
        );
        // Event queries: `POST /{resource}/event/list|count`.
        let (list_path, _) = scope(
            &AggregateType {
                static_tenant: Some(""),
                ..*agg
            },
            false,
        );
        add(
            &mut paths,
            format!("{list_path}/event/list"),
            "post",
            json!({"operationId": format!("{tag}.event.list_query"),
                   "requestBody": {"content": {"application/json": {"schema": schema_ref("wow.api.query.ListQuery")}}, "required": true},
                   "responses": ok(json!({"type": "array", "items": schema_ref(&events_name)})), "tags": [tag]}),
        );
        add(
            &mut paths,
            format!("{list_path}/event/count"),
            "post",
            json!({"operationId": format!("{tag}.event.count"),
                   "requestBody": {"content": {"application/json": {"schema": schema_ref("wow.api.query.Condition")}}, "required": true},
                   "responses": ok(json!({"type": "integer", "format": "int64"})), "tags": [tag]}),
        );
        let body_items: Vec<Value> = events(agg)
            .into_iter()
            .map(|(name, body)| {
                let schema_name = format!("{tag}.{}", pascal(name));
                schemas.insert(schema_name.clone(), body);
                json!({
                    "type": "object",
                    "properties": {
                        "body": schema_ref(&schema_name),
                        "bodyType": {"type": "string", "const": crate::domain::body_type(agg, name)},
                        "id": {"type": "string", "minLength": 1},
                        "name": {"type": "string", "const": name, "minLength": 1},
                        "revision": {"type": "string", "default": "0.0.1"}
                    },
                    "required": ["body", "bodyType", "id", "name", "revision"],
                    "title": name
                })
            })
            .collect();
        schemas.insert(
            events_name,
            json!({
                "type": "object",
                "properties": {
                    "aggregateId": {"type": "string", "minLength": 1},
                    "aggregateName": {"type": "string", "minLength": 1},
                    "body": {"type": "array", "items": {"anyOf": body_items}},
                    "commandId": {"type": "string"},
                    "contextName": {"type": "string"},
                    "createTime": {"type": "integer", "format": "int64"},
                    "header": {"type": "object", "additionalProperties": {"type": "string"}},
                    "id": {"type": "string"},
                    "ownerId": {"type": "string"},
                    "requestId": {"type": "string"},
                    "tenantId": {"type": "string"},
                    "version": {"type": "integer", "format": "int32"}
                },
                "required": ["aggregateId", "aggregateName", "body", "commandId", "contextName", "createTime", "header", "id", "requestId", "tenantId", "version"]
            }),
        );
    }
    schemas.insert(
        "example.cart.CartItem".into(),
        object(
            json!({"productId": string(), "quantity": {"type": "integer", "format": "int32"}}),
            &["productId", "quantity"],
        ),
    );
    schemas.insert(
        "example.order.CreateOrder.Item".into(),
        object(
            json!({"productId": {"type": "string", "minLength": 1}, "price": {"type": "number", "exclusiveMinimum": 0},
                   "quantity": {"type": "integer", "format": "int32", "exclusiveMinimum": 0}}),
            &["productId", "price", "quantity"],
        ),
    );
    schemas.insert(
        "example.order.ShippingAddress".into(),
        object(
            json!({"country": string(), "province": string(), "city": string(), "district": string(), "detail": string()}),
            &["country", "province", "city", "district", "detail"],
        ),
    );
    for (name, schema) in shared_schemas() {
        schemas.insert(name.into(), schema);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "wow-test-gateway",
            "version": env!("CARGO_PKG_VERSION"),
            "x-wow-context-alias": "example",
            "x-wow-context-name": "example-service",
            "x-wow-version": version
        },
        "paths": paths,
        "components": {
            "headers": {"wow.Wow-Error-Code": {"schema": {"example": "Ok", "type": "string"}}},
            "parameters": parameters(),
            "responses": responses(),
            "schemas": schemas
        },
        "tags": tags
    })
}

fn parameters() -> Value {
    let mut map = Map::new();
    let header =
        |name: &str, schema: Value| json!({"in": "header", "name": name, "schema": schema});
    map.insert(
        "wow.Accept".into(),
        json!({"in": "header", "name": "Accept", "schema": {"type": "string", "default": "application/json",
               "enum": ["application/json", "text/event-stream"]}}),
    );
    for name in &COMMAND_HEADERS[1..] {
        let schema = match *name {
            "Command-Wait-Stage" | "Command-Wait-Tail-Stage" => {
                schema_ref("wow.command.CommandStage")
            }
            "Command-Aggregate-Version" => json!({"type": "integer", "format": "int32"}),
            "Command-Wait-Timeout" => json!({"type": "integer", "format": "int64"}),
            "Command-Local-First" => json!({"type": "boolean"}),
            _ => string(),
        };
        map.insert(format!("wow.{name}"), header(name, schema));
    }
    map.insert(
        "wow.Wow-Space-Id".into(),
        header("Wow-Space-Id", json!({"example": "", "type": "string"})),
    );
    for name in ["tenantId", "ownerId", "id"] {
        map.insert(
            format!("wow.{name}"),
            json!({"in": "path", "name": name, "required": true, "schema": {"type": "string"}}),
        );
    }
    Value::Object(map)
}

fn responses() -> Value {
    let result = |sse: bool| {
        let mut content =
            json!({"application/json": {"schema": schema_ref("wow.command.CommandResult")}});
        if sse {
            content["text/event-stream"] = json!({"schema": {"anyOf": [schema_ref("wow.command.CommandResult"), {"title": "error", "type": "string"}]}});
        }
        json!({"content": content, "headers": {"Wow-Error-Code": {"$ref": "#/components/headers/wow.Wow-Error-Code"}}})
    };
    let error = || {
        json!({"content": {"application/json": {"schema": schema_ref("wow.api.DefaultErrorInfo")}},
               "headers": {"Wow-Error-Code": {"$ref": "#/components/headers/wow.Wow-Error-Code"}}})
    };
    json!({
        "wow.CommandOk": result(true),
        "wow.CommandBadRequest": result(false),
        "wow.CommandNotFound": result(false),
        "wow.CommandRequestTimeout": result(false),
        "wow.CommandVersionConflict": result(false),
        "wow.CommandIllegalAccessDeletedAggregate": result(false),
        "wow.CommandTooManyRequests": result(false),
        "wow.BadRequest": error(),
        "wow.NotFound": error(),
    })
}

fn shared_schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "wow.command.CommandStage",
            json!({"type": "string", "enum": ["SENT", "PROCESSED", "SNAPSHOT", "PROJECTED", "EVENT_HANDLED", "SAGA_HANDLED"]}),
        ),
        (
            "wow.api.BindingError",
            object(json!({"name": string(), "msg": string()}), &["name", "msg"]),
        ),
        (
            "wow.api.DefaultErrorInfo",
            json!({"type": "object", "properties": {
            "errorCode": string(), "errorMsg": string(),
            "bindingErrors": {"type": "array", "items": schema_ref("wow.api.BindingError")},
            "succeeded": {"type": "boolean", "readOnly": true}}, "required": ["errorCode", "errorMsg"]}),
        ),
        (
            "wow.api.messaging.FunctionInfoData",
            object(
                json!({"contextName": string(), "functionKind": string(), "name": string(), "processorName": string()}),
                &["contextName", "functionKind", "name", "processorName"],
            ),
        ),
        (
            "wow.command.CommandResult",
            json!({"type": "object", "properties": {
            "aggregateId": string(), "aggregateName": string(),
            "aggregateVersion": {"anyOf": [{"type": "null"}, {"type": "integer", "format": "int32"}]},
            "bindingErrors": {"type": "array", "items": schema_ref("wow.api.BindingError")},
            "commandId": string(), "contextName": string(), "errorCode": string(), "errorMsg": string(),
            "function": schema_ref("wow.api.messaging.FunctionInfoData"), "id": string(), "requestId": string(),
            "result": {"type": "object", "additionalProperties": {}},
            "signalTime": {"type": "integer", "format": "int64"}, "stage": schema_ref("wow.command.CommandStage"),
            "succeeded": {"type": "boolean", "readOnly": true}, "tenantId": string(), "waitCommandId": string()},
            "required": ["aggregateId", "aggregateName", "commandId", "contextName", "function", "id", "requestId", "stage", "tenantId", "waitCommandId"]}),
        ),
        (
            "wow.api.query.Condition",
            json!({"type": "object", "properties": {
            "field": string(), "operator": string(), "value": {}, "children": {"type": "array", "items": schema_ref("wow.api.query.Condition")}}}),
        ),
        (
            "wow.api.query.ListQuery",
            json!({"type": "object", "properties": {
            "condition": schema_ref("wow.api.query.Condition"), "limit": {"type": "integer", "format": "int32"},
            "sort": {"type": "array", "items": {"type": "object"}}, "projection": {"type": "object"}}}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_route_is_one_operation_with_its_body_schema() {
        let doc = document("8.10.10");
        let mut ops = 0;
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                let params = op["parameters"].as_array().cloned().unwrap_or_default();
                if !params
                    .iter()
                    .any(|p| p["$ref"] == "#/components/parameters/wow.Command-Wait-Stage")
                {
                    continue;
                }
                ops += 1;
                let body = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                    .as_str()
                    .unwrap();
                let name = body.trim_start_matches("#/components/schemas/");
                assert!(doc["components"]["schemas"][name].is_object(), "{name}");
            }
        }
        assert_eq!(ops, COMMANDS.len());
        assert!(doc["paths"]["/owner/{ownerId}/cart/add_cart_item"]["post"].is_object());
        assert!(doc["paths"]["/owner/{ownerId}/cart"]["delete"].is_object());
        assert!(doc["paths"]["/tenant/{tenantId}/owner/{ownerId}/sales-order"]["post"].is_object());
        assert!(doc["paths"]["/tenant/{tenantId}/sales-order/{id}/pay"]["post"].is_object());
        assert!(doc["paths"]["/account/{id}/lock_amount"]["put"].is_object());
        assert!(doc["paths"]["/sales-order/event/list"]["post"].is_object());
    }

    #[test]
    fn every_reference_is_defined() {
        let doc = document("8.10.10");
        let text = doc.to_string();
        for part in text.split("\"$ref\":\"#/components/").skip(1) {
            let target = part.split('"').next().unwrap();
            let mut node = &doc["components"];
            for key in target.split('/') {
                node = &node[key];
            }
            assert!(!node.is_null(), "{target} is referenced but not defined");
        }
    }
}
